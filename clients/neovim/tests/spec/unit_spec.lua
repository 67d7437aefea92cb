-- Pure parts: option merging and the formatting of updates. No daemon here.
local config = require("tether.config")
local render = require("tether.render")

describe("config", function()
  local messages, notify
  before_each(function()
    messages, notify = {}, vim.notify
    vim.notify = function(msg)
      messages[#messages + 1] = msg
    end
  end)
  after_each(function()
    vim.notify = notify
    config.setup({})
  end)

  --- What was said, once the scheduled notifications have run.
  local function said(n)
    vim.wait(200, function()
      return #messages >= n
    end)
    return messages
  end

  it("merges options over the defaults", function()
    local opts = config.setup({ model = "anthropic:x", chat = { position = "below" } })
    assert.equals("anthropic:x", opts.model)
    assert.equals("below", opts.chat.position)
    assert.equals(config.defaults.chat.size, opts.chat.size)
    assert.same({ "tether", "serve" }, opts.cmd)
    assert.same({}, said(0))
  end)

  it("has no default key that shadows, or is a prefix of, a built-in normal-mode command", function()
    -- Every normal-mode command of `:help index` (its sections 2 to 2.6: plain, CTRL-W, [ ],
    -- g, z commands), and Neovim's own default mappings (`grn`, `]d`, …).
    local builtin = {}
    local section
    for line in io.lines(vim.env.VIMRUNTIME .. "/doc/index.txt") do
      local number = line:match("^%d[%d.]*%. ") and line:match("^(%d[%d.]*)%.")
      if number then
        section = number
      end
      local keys = section and vim.startswith(section, "2") and line:match("^|[^|]+|\t+(%S+)")
      if keys then
        keys = keys:gsub("{.*$", ""):gsub("CTRL%-(.)", function(c)
          return vim.keycode("<C-" .. c .. ">")
        end)
        -- `[{char}`, `g{char}`, … stand for the families their own sections list.
        if not vim.tbl_contains({ "[", "]", "g", "z", vim.keycode("<C-W>") }, keys) then
          builtin[#builtin + 1] = keys
        end
      end
    end
    assert.is_true(#builtin > 300, "read :help index")
    for _, map in ipairs(vim.api.nvim_get_keymap("n")) do
      builtin[#builtin + 1] = vim.keycode(map.lhs)
    end
    for _, group in ipairs({ "questions", "review" }) do
      for action, lhs in pairs(config.defaults[group].keymaps) do
        local key = vim.keycode(lhs)
        for _, b in ipairs(builtin) do
          if b ~= "" and (vim.startswith(key, b) or vim.startswith(b, key)) then
            error(("%s.keymaps.%s = %s shadows the built-in %s"):format(group, action, lhs, vim.fn.keytrans(b)))
          end
        end
      end
    end
    for _, old in ipairs({ "ga", "ge", "gr", "g?", "ghu", "gra" }) do
      local hit = vim.iter(builtin):any(function(b)
        return b ~= "" and (vim.startswith(old, b) or vim.startswith(b, old))
      end)
      assert.is_true(hit, old .. " is found to shadow a built-in")
    end
  end)

  it("reports an empty key, a sign wider than the sign column and an absurd guard at setup", function()
    local opts = config.setup({
      questions = { keymaps = { allow = "", reject = "  " }, guard_ms = 600000 },
      review = { signs = { pending = "+++", kept = "" }, keymaps = { undo_hunk = "" } },
    })
    said(6)
    local all = table.concat(messages, "\n")
    assert.matches("option questions.keymaps.allow must be a key (a non-empty string) or false", all, 1, true)
    assert.matches("option questions.keymaps.reject must be a key", all, 1, true)
    assert.matches("option review.keymaps.undo_hunk must be a key", all, 1, true)
    assert.matches('option review.signs.pending must be 1 or 2 cells wide (the sign column), not "+++"', all, 1, true)
    assert.matches("option review.signs.kept must be 1 or 2 cells wide", all, 1, true)
    assert.matches("option questions.guard_ms must be at most 5000, not 600000", all, 1, true)
    assert.equals(config.defaults.questions.keymaps.allow, opts.questions.keymaps.allow)
    assert.equals(config.defaults.review.signs.pending, opts.review.signs.pending)
    assert.equals(400, opts.questions.guard_ms)
    assert.equals(0, config.setup({ questions = { guard_ms = 0 } }).questions.guard_ms)
  end)

  it("names a bad option, suggests what was meant, and keeps the default", function()
    local opts = config.setup({
      cmd = "tether serve",
      permission_mode = "yolo",
      chat = { positon = "left", position = "rigth", size = -1 },
      questions = { keymaps = { alow = "ga", allow = 3 } },
      modle = "x",
    })
    said(7)
    assert.same({ "tether", "serve" }, opts.cmd)
    assert.is_nil(opts.permission_mode)
    assert.equals("right", opts.chat.position)
    assert.equals(0.4, opts.chat.size)
    assert.equals(config.defaults.questions.keymaps.allow, opts.questions.keymaps.allow)
    local all = table.concat(messages, "\n")
    assert.matches("option cmd should be a table, got string", all, 1, true)
    assert.matches("option permission_mode must be one of default, acceptEdits", all, 1, true)
    assert.matches("unknown option chat.positon (did you mean chat.position?)", all, 1, true)
    local position = 'option chat.position must be one of right, left, above, below, not "rigth"'
      .. ' (did you mean "right"?)'
    assert.matches(position, all, 1, true)
    assert.matches("option chat.size must be greater than 0", all, 1, true)
    assert.matches("unknown option questions.keymaps.alow (did you mean questions.keymaps.allow?)", all, 1, true)
    assert.matches("option questions.keymaps.allow should be a string, got number", all, 1, true)
    assert.matches("unknown option modle (did you mean model?)", all, 1, true)
  end)

  it("accepts false for a key, free keys in cmd_env, and the old preview option", function()
    local opts = config.setup({
      chat = { keymaps = { close = false } },
      cmd_env = { MY_VAR = "1" },
      permissions = { preview_diff = false },
    })
    assert.is_false(opts.chat.keymaps.close)
    assert.same({ MY_VAR = "1" }, opts.cmd_env)
    assert.is_false(opts.questions.preview)
    assert.matches("option permissions is now questions", said(1)[1], 1, true)
  end)
end)

describe("render", function()
  it("labels links by path and line range", function()
    local uri = vim.uri_from_fname("/ws/src/a.py")
    assert.equals("src/a.py", render.link_label({ type = "resource_link", uri = uri }, "/ws"))
    local lines = { start = { line = 1, character = 0 }, ["end"] = { line = 3, character = 0 } }
    assert.equals("src/a.py:2-3", render.link_label({ type = "resource_link", uri = uri, range = lines }, "/ws"))
    -- A characterwise selection says exactly where it starts and ends (1-based columns).
    local word = { start = { line = 4, character = 2 }, ["end"] = { line = 4, character = 9 } }
    assert.equals("/ws/src/a.py:5:3-5:9", render.link_label({ type = "resource_link", uri = uri, range = word }))
  end)

  it("summarises usage and the plan", function()
    local usage = {
      inputTokens = 12345,
      outputTokens = 678,
      costUsd = 0.0123,
      contextTokens = 50000,
      contextWindow = 200000,
    }
    assert.equals("12.3k in · 678 out · $0.0123 · ctx 25%", render.usage(usage))
    local plan = {
      { content = "Read", status = "completed" },
      { content = "Fix", status = "in_progress", activeForm = "Fixing" },
      { content = "Test", status = "pending" },
    }
    assert.equals("1/3 Fixing", render.plan_summary(plan))
    assert.same({ "☑ Read", "◐ Fix", "☐ Test" }, render.plan_lines(plan))
  end)

  it("renders tool bodies: command, diff, output, elided past the limit", function()
    local tool = {
      title = "Bash",
      status = "completed",
      toolKind = "execute",
      rawInput = { command = "ls" },
      content = {
        { type = "diff", uri = "file:///a", oldText = "a\nb\n", newText = "a\nc\n" },
        { type = "terminal", output = "1\n2\n3\n4\n", exitCode = 0 },
      },
    }
    local body = render.tool_body(tool, 3)
    assert.same({
      "```sh",
      "$ ls",
      "```",
      "```diff",
      "@@ -1,2 +1,2 @@",
      " a",
      "-b",
      "… 1 more lines",
      "```",
      "```",
      "1",
      "2",
      "3",
      "… 2 more lines",
      "```",
    }, body)
    assert.equals("✓ Bash", render.tool_header(config.defaults.icons, tool))
  end)

  it("numbers the hunks of a big file's region diff as in the file", function()
    local diff = render.diff("a\nb\nc\n", "a\nB\nc\n", 99)
    assert.same({ "@@ -100,3 +100,3 @@", " a", "-b", "+B", " c", "" }, vim.split(diff, "\n", { plain = true }))
    assert.truthy(render.diff("a\nb\n", "a\nc\n"):find("^@@ %-1,2 %+1,2 @@"))
  end)

  it("shows tool titles with workspace-relative paths, and rejections as such", function()
    local icons = config.defaults.icons
    local tool = { title = "Read /ws/src/a.py", status = "completed" }
    assert.equals("✓ Read src/a.py", render.tool_header(icons, tool, "/ws"))
    tool = { title = "Bash", status = "failed", rejected = "user" }
    assert.equals("⊘ Bash — Rejected by you", render.tool_header(icons, tool, "/ws"))
    tool = { title = "Edit /ws/a.py", status = "pending", waiting = true }
    assert.equals("? Edit a.py", render.tool_header(icons, tool, "/ws"))
    tool = { title = "Leave plan mode", status = "failed", rejected = "user", rawInput = { plan = "1. x" } }
    assert.equals("⊘ Leave plan mode — Kept planning", render.tool_header(icons, tool, "/ws"))
  end)

  it("closes a turn with a line only when it did not end normally", function()
    assert.is_nil(render.stop_line("end_turn"))
    assert.equals("_Cancelled._", render.stop_line("cancelled"))
    assert.equals("**Error:** boom", render.stop_line("error", { code = "x", message = "boom" }))
  end)
end)

describe("status (winbar)", function()
  local status = require("tether.status")
  local state = require("tether.state")
  local icons = config.defaults.icons
  local PLAN = {
    { content = "Read", status = "completed" },
    { content = "Fix", status = "in_progress", activeForm = "Fixing the greeting" },
    { content = "Test", status = "pending" },
  }

  local function session(extra)
    local s = state.new("id", "/ws", "plan")
    s.busy, s.plan = 1, PLAN
    s.total = { inputTokens = 21000, outputTokens = 500, costUsd = 0.25 }
    s.live = { inputTokens = 1200, outputTokens = 9, costUsd = 0.01 }
    s.ctx = { tokens = 50000, window = 200000 }
    return vim.tbl_extend("force", s, extra or {})
  end

  it("puts what matters first and drops the rest by width", function()
    local s = session()
    local wide = status.text(status.fit(status.parts(s, icons), 200))
    local all = "◐ working │ plan mode │ ☑ 1/3 Fixing the greeting │ ctx 25% │ $0.2600 │ 22.2k in · 509 out │ Tether"
    assert.equals(all, wide)
    local narrow = status.text(status.fit(status.parts(s, icons), 60))
    assert.equals("◐ working │ plan mode │ ☑ 1/3 Fixing the greeting │ ctx 25%", narrow)
    assert.is_true(vim.api.nvim_strwidth(narrow) <= 60)
  end)

  it("shows a waiting question first, at 60 columns and below", function()
    local s = session()
    state.reduce(s, {
      type = "question",
      question = { id = "1", kind = "tool", toolCallId = "t1", title = "Edit /ws/src/app.py", rawInput = {},
        content = {}, options = {}, status = "open" },
    })
    local bar = status.text(status.fit(status.parts(s, icons), 60))
    assert.matches("^%? answer needed: Edit src/app%.py │ plan mode", bar)
    local tiny = status.text(status.fit(status.parts(s, icons), 20))
    assert.equals("? answer needed: Ed…", tiny)
  end)

  it("keeps the cost after the turn, and shows a small share of a big window", function()
    local s = session({ busy = 0, mode = "default", ctx = { tokens = 8200, window = 1000000 } })
    s.live, s.plan = nil, nil
    local bar = status.text(status.fit(status.parts(s, icons), 200))
    assert.equals("ask before edits │ ctx 0.8% │ $0.2500 │ 21.0k in · 500 out │ Tether", bar)
    assert.equals("ctx 0%", render.context(0, 1000000))
    assert.equals("ctx 0.1%", render.context(12, 1000000))
    assert.equals("ctx 42%", render.context(84000, 200000))
  end)
end)

describe("state (the session reducer)", function()
  local state = require("tether.state")

  local function live(s, turn, update)
    return state.reduce(s, { type = "update", turnId = turn, update = update, live = true })
  end

  local function kinds(s)
    return vim.tbl_map(function(item)
      return item.kind
    end, s.items)
  end

  it("forgets a finished todo list when the next turn starts, not an unfinished one", function()
    local s = state.new("id", "/ws")
    local done = { { content = "Read", status = "completed" }, { content = "Fix", status = "completed" } }
    live(s, "t1", { kind = "user_message", content = { { type = "text", text = "one" } } })
    live(s, "t1", { kind = "plan", entries = done })
    live(s, "t1", { kind = "turn_end", stopReason = "end_turn" })
    assert.same(done, s.plan, "the turn that finished it still shows it")
    -- A later turn without a todo list of its own (a daemon-started one has no prompt).
    live(s, "t2", { kind = "agent_message_chunk", text = "Going on." })
    assert.is_nil(s.plan)

    local open = { { content = "Read", status = "completed" }, { content = "Fix", status = "pending" } }
    live(s, "t2", { kind = "plan", entries = open })
    live(s, "t2", { kind = "turn_end", stopReason = "end_turn" })
    live(s, "t3", { kind = "user_message", content = { { type = "text", text = "three" } } })
    assert.same(open, s.plan, "unfinished work is still status")
  end)

  it("starts a new paragraph for each model response, and for each history block", function()
    local s = state.new("id", "/ws")
    live(s, "t1", { kind = "user_message", content = { { type = "text", text = "run it" } } })
    live(s, "t1", { kind = "agent_message_chunk", text = "All 3 " })
    live(s, "t1", { kind = "agent_message_chunk", text = "tests pass." })
    live(s, "t1", { kind = "usage", inputTokens = 1, outputTokens = 1, cacheReadTokens = 0, cacheCreationTokens = 0 })
    live(s, "t1", { kind = "agent_message_chunk", text = "Running the suite…" })
    assert.same({ "user", "agent", "agent" }, kinds(s))
    assert.equals("All 3 tests pass.", s.items[2].text)
    assert.is_true(s.items[2].reply_start)
    assert.is_nil(s.items[3].reply_start, "one reply header per reply")

    local h = state.new("id", "/ws")
    state.reduce(h, {
      type = "loaded",
      history = {
        { turnId = "t1", kind = "user_message", content = { { type = "text", text = "run it" } } },
        { turnId = "t1", kind = "agent_message_chunk", text = "All 3 tests pass." },
        { turnId = "t1", kind = "agent_message_chunk", text = "Running the suite…" },
      },
    })
    assert.same({ "user", "agent", "agent" }, kinds(h))
  end)

  it("numbers turns, keeps how each ended, and rewinds from a turn on", function()
    local s = state.new("id", "/ws")
    for i, text in ipairs({ "fix it", "fix it", "second\nline" }) do
      local turn = "t" .. i
      live(s, turn, { kind = "user_message", content = { { type = "text", text = text } } })
      if i == 1 then
        live(s, turn, { kind = "turn_end", stopReason = "error", error = { code = "model_error", message = "no key" } })
      else
        live(s, turn, { kind = "turn_end", stopReason = "end_turn" })
      end
    end
    local pickers = require("tether.pickers")
    assert.same(
      { "1. fix it  [failed: no key]", "2. fix it", "3. second  (+1 line)" },
      vim.tbl_map(pickers.turn_label, s.turns)
    )
    local _, changed = state.reduce(s, { type = "rewound", turnId = "t2", restored = { "a.py" } })
    assert.same({ "t1" }, vim.tbl_map(function(t)
      return t.turnId
    end, s.turns))
    local rewound = vim.tbl_filter(function(item)
      return item.rewound
    end, s.items)
    assert.is_true(#rewound >= 2)
    assert.equals("⤺ Rewound to before “fix it”: restored a.py.", s.items[#s.items].text)
    assert.is_true(#changed >= #rewound + 1, "every dimmed item and the note are redrawn")
  end)

  it("names the mode in the words of the winbar, and how to fix a key", function()
    local pickers = require("tether.pickers")
    assert.equals("ask before edits (default)", pickers.mode_label("default"))
    assert.equals("accept edits (acceptEdits)", pickers.mode_label("acceptEdits"))
    assert.equals(
      "no Anthropic credentials: set ANTHROPIC_API_KEY (in Neovim: :let $ANTHROPIC_API_KEY = '…', then :TetherRestart)",
      render.turn_error("no Anthropic credentials: set ANTHROPIC_API_KEY")
    )
    assert.equals("the model refused", render.turn_error("the model refused"))
  end)
end)

describe("history", function()
  it("keeps a workspace's prompts in a file only the user can read", function()
    local history = require("tether.history")
    local root = vim.fn.tempname()
    history.add(root, "a prompt with a secret in it")
    local path = history.path(root)
    assert.equals(384, bit.band(vim.uv.fs_stat(path).mode, 511), "0600")
    assert.equals(448, bit.band(vim.uv.fs_stat(vim.fs.dirname(path)).mode, 511), "0700")
    history.reset()
    assert.same({ "a prompt with a secret in it" }, history.list(root))
    os.remove(path)
  end)
end)
