-- Pure parts: option merging and the formatting of updates. No daemon here.
local config = require("tether.config")
local render = require("tether.render")

describe("config", function()
  after_each(function()
    config.setup({})
  end)

  it("merges options over the defaults", function()
    local opts = config.setup({ model = "anthropic:x", chat = { position = "below" } })
    assert.equals("anthropic:x", opts.model)
    assert.equals("below", opts.chat.position)
    assert.equals(config.defaults.chat.size, opts.chat.size)
    assert.same({ "tether", "serve" }, opts.cmd)
  end)

  it("warns about a bad option and keeps the default", function()
    local messages = {}
    local notify = vim.notify
    vim.notify = function(msg)
      messages[#messages + 1] = msg
    end
    local opts = config.setup({ cmd = "tether serve", permission_mode = "yolo" })
    vim.wait(100, function()
      return #messages == 2
    end)
    vim.notify = notify
    assert.same({ "tether", "serve" }, opts.cmd)
    assert.is_nil(opts.permission_mode)
    assert.matches("option cmd should be a table", messages[1], 1, true)
    assert.matches("unknown permission_mode yolo", messages[2], 1, true)
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
    assert.matches("^%? Edit a%.py — waiting for your answer", render.tool_header(icons, tool, "/ws"))
  end)

  it("closes a turn with a line only when it did not end normally", function()
    assert.is_nil(render.stop_line("end_turn"))
    assert.equals("_Cancelled._", render.stop_line("cancelled"))
    assert.equals("**Error:** boom", render.stop_line("error", { code = "x", message = "boom" }))
  end)
end)

describe("status (winbar)", function()
  local status = require("tether.status")
  local icons = config.defaults.icons
  local PLAN = {
    { content = "Read", status = "completed" },
    { content = "Fix", status = "in_progress", activeForm = "Fixing the greeting" },
    { content = "Test", status = "pending" },
  }

  local function session(extra)
    return vim.tbl_extend("force", {
      root = "/ws",
      busy = 1,
      mode = "plan",
      plan = PLAN,
      questions = {},
      total = { inputTokens = 21000, outputTokens = 500, costUsd = 0.25 },
      live = { inputTokens = 1200, outputTokens = 9, costUsd = 0.01 },
      ctx = { tokens = 50000, window = 200000 },
    }, extra or {})
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
    local s = session({ questions = { { title = "Edit /ws/src/app.py" } } })
    local bar = status.text(status.fit(status.parts(s, icons), 60))
    assert.matches("^%? answer needed: Edit src/app%.py │ plan mode", bar)
    local tiny = status.text(status.fit(status.parts(s, icons), 20))
    assert.equals("? answer needed: Ed…", tiny)
  end)

  it("forgets a finished todo list once the turn is over, and keeps the cost", function()
    local done = vim.tbl_map(function(e)
      return vim.tbl_extend("force", e, { status = "completed" })
    end, PLAN)
    local s = session({ busy = 0, plan = done, live = vim.NIL, mode = "default" })
    s.live = nil
    local bar = status.text(status.fit(status.parts(s, icons), 200))
    assert.equals("ask before edits │ ctx 25% │ $0.2500 │ 21.0k in · 500 out │ Tether", bar)
  end)
end)
