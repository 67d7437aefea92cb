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
    local session = require("tether.session")
    local on_update = session.on_update
    local snapshots, progress = {}, {}
    session.on_update = function(params, ctx)
      on_update(params, ctx)
      if params.update.kind == "agent_message_chunk" then
        snapshots[#snapshots + 1] = session.sessions[params.sessionId].chat:contents()
      end
    end
    vim.api.nvim_create_autocmd("LspProgress", {
      callback = function(ev)
        progress[#progress + 1] = { kind = ev.data.params.value.kind, status = vim.lsp.status() }
      end,
    })

    vim.cmd("TetherPrompt What does this app do?")
    local s = H.session()
    H.wait(15000, function()
      return #s.turns == 1
    end, "the turn to end")
    session.on_update = on_update

    local chat = s.chat:contents()
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
    local win = s.chat:windows()[1]
    assert.is_not_nil(win)
    local lines = vim.api.nvim_buf_get_lines(s.chat.buf, 0, -1, false)
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

    -- Plan and usage in the winbar, the plan in full in the footer.
    local winbar = vim.wo[win].winbar
    assert.matches("plan 1/2 Explaining it", winbar)
    assert.matches("in · ", winbar)
    local footer = vim.api.nvim_buf_get_extmarks(s.chat.buf, -1, 0, -1, { details = true, type = "virt_lines" })
    assert.equals(1, #footer)
    assert.equals("☑ Read the app", footer[1][4].virt_lines[2][1][1])

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
      local task = next(s.tasks) and select(2, next(s.tasks))
      return task and task.status == "running"
    end, "the task to start")
    local calls = H.stub_select(function(items)
      return items[1]
    end)
    vim.cmd("TetherTasks")
    assert.equals(1, #calls)
    assert.equals("tether.task", calls[1].opts.kind)
    assert.matches("^◐ sleep in the background  %[running%]", calls[1].opts.format_item(calls[1].items[1]))
    assert.equals(s.chat.buf, vim.api.nvim_get_current_buf(), "choosing a task opens the chat")
    assert.equals("✓ sleep in the background", vim.api.nvim_get_current_line())
  end)

  it("takes a prompt typed in the chat", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.say("Hello from the chat.") } }))
    vim.cmd("Tether!")
    local s = H.session()
    assert.equals(s.chat.buf, vim.api.nvim_get_current_buf(), ":Tether! moves into the chat")
    local input = vim.ui.input
    vim.ui.input = function(opts, on_confirm)
      assert.equals("Tether> ", opts.prompt)
      on_confirm("hi there")
    end
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "xt", false)
    vim.ui.input = input
    H.wait(10000, function()
      return #s.turns == 1
    end, "the turn")
    assert.matches("## You\n\nhi there\n\n## Tether\n\nHello from the chat.", s.chat:contents(), 1, true)
    vim.api.nvim_feedkeys("q", "xt", false)
    assert.equals(0, #s.chat:windows(), "q closes the chat")
  end)

  it("sets the mode and shows it", function()
    local root = H.workspace()
    H.setup(H.script(root, {}))
    vim.cmd("Tether")
    local s = H.session()
    vim.cmd("TetherMode plan")
    H.wait(5000, function()
      return s.mode == "plan"
    end, "the mode to change")
    assert.matches("plan", vim.wo[s.chat:windows()[1]].winbar)
  end)
end)
