local H = require("helpers")

local TODOS = {
  { content = "Read the app", status = "completed", activeForm = "Reading the app" },
  { content = "Explain it", status = "in_progress", activeForm = "Explaining it" },
}
local STORY = "The app greets people by name and says goodbye to them as well. That is all it does."

describe("chat", function()
  after_each(H.reset)

  it("streams a prompt into the chat without taking the cursor", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      {
        { type = "thinking", thinking = "The user wants a summary.\nReading the file first." },
        H.say("Let me look."),
        H.tool("TodoWrite", { todos = TODOS }),
        H.tool("Read", { file_path = "src/app.py" }),
      },
      { chunk_delay_ms = 20, blocks = { H.say(STORY) } },
    }))
    vim.cmd.edit(root .. "/src/app.py")
    local user_win = vim.api.nvim_get_current_win()

    -- Record the chat as each chunk arrives, and the progress events.
    local s = H.session()
    local snapshots, progress = {}, {}
    local unsubscribe = s:subscribe(function(_, event)
      local action = event.type == "changed" and event.action
      if action and action.type == "update" and action.update.kind == "agent_message_chunk" then
        snapshots[#snapshots + 1] = H.chat(s):contents()
      end
    end)
    vim.api.nvim_create_autocmd("LspProgress", {
      callback = function(ev)
        progress[#progress + 1] = { kind = ev.data.params.value.kind, status = vim.lsp.status() }
      end,
    })

    vim.cmd("TetherPrompt What does this app do?")
    H.wait(15000, function()
      return #s.state.turns == 1 and s.state.busy == 0
    end, "the turn to end")
    unsubscribe()

    local chat = H.chat(s):contents()
    assert.matches("## You\n\nWhat does this app do%?", chat)
    local thought = "💭 Thinking\nThe user wants a summary.\nReading the file first."
    assert.matches("## Tether\n\n" .. thought .. "\n\nLet me look.", chat, 1, true)
    assert.matches(vim.pesc(STORY), chat)
    -- Streamed: the story appeared in several growing pieces, not at once.
    local partial = vim.tbl_filter(function(text)
      return text:find("The app greets", 1, true) and not text:find("all it does.", 1, true)
    end, snapshots)
    assert.is_true(#partial >= 2, "expected partial chat states while streaming")

    -- Tool calls are blocks with a status icon; the chat window folds them.
    assert.matches("✓ Read src/app%.py", chat)
    local win = H.chat(s):windows()[1]
    assert.is_not_nil(win)
    local lines = vim.api.nvim_buf_get_lines(H.chat(s).buf, 0, -1, false)
    local header
    for i, line in ipairs(lines) do
      if line:find("Read src/app.py", 1, true) then
        header = i
      end
    end
    assert.is_truthy(lines[header + 1]:find("```", 1, true), "the tool block has a body")
    local closed = vim.api.nvim_win_call(win, function()
      return { vim.fn.foldclosed(header), vim.fn.foldclosed(header + 1), vim.fn.foldclosedend(header) }
    end)
    assert.same({ header, header }, { closed[1], closed[2] })
    assert.equals("```", lines[closed[3]], "the fold ends with the block")

    -- The todo list and usage in the winbar, the list in full in its own window.
    vim.api.nvim_win_set_width(win, 64)
    H.chat(s):refresh_status()
    local winbar = vim.wo[win].winbar
    assert.matches("☑ 1/2 Explaining it", winbar, 1, true)
    assert.matches("ctx [%d.]+%%", winbar)
    local plan_win = vim.fn.win_findbuf(H.chat(s).plan_buf)[1]
    assert.is_not_nil(plan_win, "the todo list is shown")
    assert.same({ "☑ Read the app", "◐ Explain it" }, vim.api.nvim_buf_get_lines(H.chat(s).plan_buf, 0, -1, false))

    -- The user's window kept the cursor all along.
    assert.equals(user_win, vim.api.nvim_get_current_win())
    assert.equals("n", vim.api.nvim_get_mode().mode)

    -- Progress went through Neovim's LSP progress (fidget & co. read the same).
    local kinds = vim.tbl_map(function(p)
      return p.kind
    end, progress)
    assert.equals("begin", kinds[1])
    assert.equals("end", kinds[#kinds])
    assert.is_truthy(vim.tbl_contains(kinds, "report"))
    assert.matches("Tether", progress[1].status)
  end)

  it("lists background tasks and jumps to the tool call that started one", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      {
        {
          type = "tool_use",
          id = "toolu_bg",
          name = "Bash",
          -- Still running when the turn ends: a task that finishes while the session is idle
          -- makes the daemon start a turn to tell the model, which this script does not have.
          input = { command = "sleep 5", description = "sleep in the background", run_in_background = true },
        },
      },
      { H.say("Started it.") },
    }), { permission_mode = "bypassPermissions" })
    local s = H.session()
    H.prompt(s, "run it in the background")
    H.wait(10000, function()
      local task = next(s.state.tasks) and select(2, next(s.state.tasks))
      return task and task.status == "running"
    end, "the task to start")
    local calls = H.stub_select(function(items)
      return items[1]
    end)
    vim.cmd("TetherTasks")
    assert.equals(1, #calls)
    assert.equals("tether.task", calls[1].opts.kind)
    assert.matches("^◐ sleep in the background  %[running%]", calls[1].opts.format_item(calls[1].items[1]))
    assert.equals(H.chat(s).buf, vim.api.nvim_get_current_buf(), "choosing a task opens the chat")
    assert.equals("✓ sleep in the background", vim.api.nvim_get_current_line())
  end)

  it("takes a multi-line prompt written in its prompt area, with history and mentions", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { expect = { contains = "first line\nsecond line" }, blocks = { H.say("Got both lines.") } },
      -- @src/app.py went along as an attached file: the model sees its text.
      { expect = { contains = 'return "Hello, " + name' }, blocks = { H.say("Read the mention.") } },
    }))
    vim.cmd("Tether!")
    local s = H.session()
    assert.equals(H.chat(s).input.buf, vim.api.nvim_get_current_buf(), ":Tether! moves into the prompt area")
    assert.equals(1, #H.chat(s):windows())
    vim.api.nvim_feedkeys(vim.keycode("ifirst line<CR>second line<Esc><CR>"), "xt", false)
    H.wait(10000, function()
      return #s.state.turns == 1 and s.state.busy == 0
    end, "the turn")
    assert.matches("## You\n\nfirst line\nsecond line\n\n## Tether\n\nGot both lines.", H.chat(s):contents(), 1, true)
    assert.same({ "" }, vim.api.nvim_buf_get_lines(H.chat(s).input.buf, 0, -1, false), "the area is empty again")

    -- <Up> on the first line brings the last prompt back; <Down> returns to the draft.
    vim.api.nvim_feedkeys(vim.keycode("idraft<Esc><Up>"), "xt", false)
    assert.same({ "first line", "second line" }, vim.api.nvim_buf_get_lines(H.chat(s).input.buf, 0, -1, false))
    vim.api.nvim_feedkeys(vim.keycode("G<Down>"), "xt", false)
    assert.same({ "draft" }, vim.api.nvim_buf_get_lines(H.chat(s).input.buf, 0, -1, false))

    -- Completion offers workspace files after @ and buffers after #.
    vim.api.nvim_buf_set_lines(H.chat(s).input.buf, 0, -1, false, { "look at @src/ap" })
    vim.api.nvim_win_set_cursor(0, { 1, #"look at @src/ap" })
    local omni = require("tether.mentions").omnifunc
    vim.cmd.startinsert({ bang = true })
    local start = omni(1, "")
    assert.equals(#"look at ", start)
    local words = vim.tbl_map(function(item)
      return item.word
    end, omni(0, "@src/ap"))
    assert.same({ "@src/app.py" }, words)
    vim.cmd.stopinsert()
    vim.cmd.edit(root .. "/README.md")
    vim.cmd.buffer(H.chat(s).input.buf)
    local buffers = vim.tbl_map(function(item)
      return item.word
    end, omni(0, "#READ"))
    assert.same({ "#README.md" }, buffers)
    vim.cmd.buffer("#")

    -- <C-s> sends from insert mode; the mention becomes an attached file.
    vim.cmd.buffer(H.chat(s).input.buf)
    vim.api.nvim_buf_set_lines(H.chat(s).input.buf, 0, -1, false, {})
    vim.api.nvim_feedkeys(vim.keycode("iexplain @src/app.py please<C-s>"), "xt", false)
    H.wait(10000, function()
      return #s.state.turns == 2 and s.state.busy == 0
    end, "the second turn")
    assert.matches("## You\n\n📎 `src/app.py`\nexplain @src/app.py please", H.chat(s):contents(), 1, true)
    assert.matches("Read the mention.", H.chat(s):contents(), 1, true)
    vim.cmd.wincmd("p")
  end)

  it("highlights Markdown with treesitter, code blocks in their language, fences hidden", function()
    local root = H.workspace()
    local reply = "Here:\n\n```lua\nlocal answer = 42\n```\n\n```diff\n-old\n+new\n```\n"
    H.setup(H.script(root, { { H.say(reply) } }))
    local s = H.session()
    H.prompt(s, "show code")
    local buf = H.chat(s).buf
    assert.is_not_nil(vim.treesitter.highlighter.active[buf], "treesitter highlights the chat")
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local row
    for i, line in ipairs(lines) do
      if line == "local answer = 42" then
        row = i - 1
      end
    end
    vim.treesitter.get_parser(buf, require("tether.markdown").LANG):parse(true) -- injections too, as drawing does
    local langs = vim.tbl_map(function(c)
      return c.lang .. ":" .. c.capture
    end, vim.treesitter.get_captures_at_pos(buf, row, 0))
    assert.is_true(vim.tbl_contains(langs, "lua:keyword"), "lua is injected: " .. vim.inspect(langs))
    -- The fences are concealed in the chat window (their text; the line stays, so that
    -- Neovim scrolls right while following the reply).
    local fence = vim.tbl_filter(function(c)
      return c.metadata and c.metadata.conceal == ""
    end, vim.treesitter.get_captures_at_pos(buf, row - 1, 0))
    assert.is_true(#fence > 0, "the fence is concealed")
    assert.equals(2, vim.wo[H.chat(s):windows()[1]].conceallevel)
    -- Diff lines get colours even without a diff parser (drawn by a decoration provider).
    local win = H.chat(s):windows()[1]
    vim.api.nvim_set_current_win(win)
    vim.cmd("normal! G")
    vim.cmd.redraw()
    local function attr_of(text)
      for r = 1, vim.o.lines do
        local col = vim.fn.win_screenpos(win)[2]
        local cells = {}
        for c = col, col + #text - 1 do
          cells[#cells + 1] = vim.fn.screenstring(r, c)
        end
        if table.concat(cells) == text then
          return vim.fn.screenattr(r, col)
        end
      end
    end
    local added, removed, plain = attr_of("+new"), attr_of("-old"), attr_of("Here:")
    assert.is_not_nil(added, "the diff is on screen")
    assert.are_not.equal(plain, added)
    assert.are_not.equal(plain, removed)
    assert.are_not.equal(added, removed)
    vim.cmd.wincmd("p")
  end)

  it("falls back to regex syntax without a markdown parser", function()
    local root = H.workspace()
    H.setup(H.script(root, {}))
    local start = vim.treesitter.start
    vim.treesitter.start = function()
      error("no parser for markdown")
    end
    local ok, s = pcall(H.session)
    vim.treesitter.start = start
    assert(ok, s)
    assert.equals("markdown", vim.bo[H.chat(s).buf].syntax)
    assert.is_nil(vim.treesitter.highlighter.active[H.chat(s).buf])
  end)

  it("does not bring back the last turn's finished todo list during the next turn", function()
    local root = H.workspace()
    local finished = vim.tbl_map(function(e)
      return vim.tbl_extend("force", e, { status = "completed" })
    end, TODOS)
    H.setup(H.script(root, {
      { H.tool("TodoWrite", { todos = finished }) },
      { H.say("All done.") },
      { chunk_delay_ms = 30, blocks = { H.say("Something else, at some length.") } },
    }))
    local s = H.session()
    H.prompt(s, "do the list")
    local chat = H.chat(s)
    local seen = {}
    s:subscribe(function(_, event)
      if event.type == "changed" and event.action.type == "update" and event.action.live then
        seen[#seen + 1] = {
          winbar = vim.wo[chat:windows()[1]].winbar,
          todo = vim.fn.win_findbuf(chat.plan_buf)[1] ~= nil,
        }
      end
    end)
    H.prompt(s, "something else")
    assert.is_true(#seen > 3)
    for _, at in ipairs(seen) do
      assert.is_nil(at.winbar:find("☑", 1, true), at.winbar)
      assert.is_false(at.todo, "the todo window stays closed")
    end
  end)

  it("keeps the todo list in sight when the chat is longer than its window", function()
    local root = H.workspace()
    local long = ("A long paragraph line.\n\n"):rep(60)
    H.setup(H.script(root, {
      { H.tool("TodoWrite", { todos = TODOS }) },
      { H.say(long) },
    }))
    local s = H.session()
    H.prompt(s, "go on at length")
    local chat_win = H.chat(s):windows()[1]
    assert.is_true(vim.api.nvim_buf_line_count(H.chat(s).buf) > vim.api.nvim_win_get_height(chat_win))
    local plan_win = vim.fn.win_findbuf(H.chat(s).plan_buf)[1]
    assert.is_not_nil(plan_win)
    assert.equals(2, vim.api.nvim_win_get_height(plan_win))
    -- Its status line says what it is (not "[Scratch]").
    assert.matches("Todo list  1/2 Explaining it", vim.wo[plan_win].statusline, 1, true)
    -- Below the chat, above the prompt area.
    local chat_row = vim.api.nvim_win_get_position(chat_win)[1]
    local plan_row = vim.api.nvim_win_get_position(plan_win)[1]
    local input_row = vim.api.nvim_win_get_position(vim.fn.win_findbuf(H.chat(s).input.buf)[1])[1]
    assert.is_true(chat_row < plan_row and plan_row < input_row)
  end)

  it("sets the mode and shows it, in the winbar's words", function()
    local root = H.workspace()
    H.setup(H.script(root, {}))
    vim.cmd("Tether")
    local s = H.session()
    local calls = H.stub_select(function()
      return nil
    end)
    vim.cmd("TetherMode")
    assert.equals("Permission mode (now: ask before edits)", calls[1].opts.prompt)
    assert.same({
      "ask before edits (default)",
      "accept edits (acceptEdits)",
      "plan mode (plan)",
      "bypass permissions (bypassPermissions)",
      "don't ask (dontAsk)",
    }, vim.tbl_map(calls[1].opts.format_item, calls[1].items))
    vim.cmd("TetherMode plan")
    H.wait(5000, function()
      return s.state.mode == "plan"
    end, "the mode to change")
    assert.matches("plan mode", vim.wo[H.chat(s):windows()[1]].winbar, 1, true)
  end)
end)
