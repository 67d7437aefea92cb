local H = require("helpers")

local ECHO = H.tool("Bash", { command = "echo permitted > out.txt" })
local EDIT = H.tool("Edit", {
  file_path = "src/app.py",
  old_string = 'return "Hello, " + name',
  new_string = 'return "Hi, " + name',
})

--- A stub that answers with the option of `kind` (after a delay when `later`).
---@param kind string
---@param later? boolean
local function answer(kind, later)
  return H.stub_select(function(items, opts)
    if opts.kind ~= "tether.permission" then
      return nil
    end
    local option = H.find(items, "kind", kind)
    if later then
      return function()
        return option
      end
    end
    return option
  end)
end

describe("permissions", function()
  after_each(H.reset)

  it("asks through vim.ui.select and runs the command when allowed", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local calls = answer("allow_once")
    local s = H.session()
    local result = H.prompt(s, "write the file")
    assert.equals("end_turn", result.stopReason)

    assert.equals(1, #calls)
    local call = calls[1]
    assert.matches("echo permitted > out.txt", call.opts.prompt, 1, true)
    local kinds = vim.tbl_map(function(o)
      return o.kind
    end, call.items)
    assert.same({ "allow_once", "allow_always", "reject_once", "reject_always" }, kinds)
    assert.equals("Allow once", call.opts.format_item(call.items[1]))
    assert.equals("permitted\n", H.read(root .. "/out.txt"))
    assert.matches("✓ echo permitted > out.txt", s.chat:contents(), 1, true)
  end)

  it("rejects when the (asynchronous) picker says so", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local calls = answer("reject_once", true)
    local s = H.session()
    H.prompt(s, "write the file")
    assert.equals(1, #calls)
    assert.is_nil(vim.uv.fs_stat(root .. "/out.txt"))
    -- A rejection is not a failure, and the text meant for the model stays out of view.
    assert.matches("⊘ echo permitted > out.txt — Rejected by you", s.chat:contents(), 1, true)
    assert.is_nil(s.chat:contents():find("✗", 1, true))
  end)

  it("keeps a dismissed question open until it is answered (:TetherAnswer)", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local dismiss = true
    local calls = H.stub_select(function(items)
      if dismiss then
        return nil -- Escape
      end
      return H.find(items, "kind", "allow_once")
    end)
    local s = H.session()
    local result
    require("tether.session").prompt(s, "write the file", function(_, r)
      result = r
    end)
    H.wait(10000, function()
      return #calls == 1
    end, "the question")
    -- Dismissed: not an answer. The turn waits, and the chat says what it waits for.
    vim.wait(300)
    assert.is_nil(result)
    assert.equals(1, #s.questions)
    assert.is_nil(vim.uv.fs_stat(root .. "/out.txt"))
    local win = s.chat:windows()[1]
    assert.matches("answer needed: echo permitted", vim.wo[win].winbar, 1, true)
    local card = "? echo permitted > out.txt — waiting for your answer (<CR> here, or :TetherAnswer)"
    assert.matches(card, s.chat:contents(), 1, true)

    dismiss = false
    vim.cmd("TetherAnswer")
    H.wait(10000, function()
      return result
    end, "the turn to go on")
    assert.equals(2, #calls)
    assert.equals("end_turn", result.stopReason)
    assert.equals("permitted\n", H.read(root .. "/out.txt"))
    assert.equals(0, #s.questions)
    assert.matches("✓ echo permitted > out.txt", s.chat:contents(), 1, true)
    assert.is_nil(vim.wo[win].winbar:find("answer needed", 1, true))
  end)

  it("answers from the question's card with <CR>, and a cancel withdraws it", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local calls = H.stub_select(function()
      return nil
    end)
    local s = H.session()
    local result
    require("tether.session").prompt(s, "write the file", function(_, r)
      result = r
    end)
    H.wait(10000, function()
      return #calls == 1 and #s.questions == 1 and s.chat.text:row_of(s.questions[1].tool_call_id)
    end, "the question and its card")
    -- <CR> on the card asks again.
    local win = s.chat:windows()[1]
    vim.api.nvim_set_current_win(win)
    local row = s.chat.text:row_of(s.questions[1].tool_call_id)
    vim.api.nvim_win_set_cursor(win, { row + 1, 0 })
    vim.api.nvim_feedkeys(vim.keycode("<CR>"), "xt", false)
    H.wait(5000, function()
      return #calls == 2
    end, "the question again")
    -- Cancelling the turn withdraws the question: no answer is sent, nothing runs.
    vim.cmd("TetherCancel")
    H.wait(10000, function()
      return result
    end, "the cancelled turn")
    assert.equals("cancelled", result.stopReason)
    assert.equals(0, #s.questions)
    assert.is_nil(s.chat:contents():find("waiting for your answer", 1, true))
    assert.is_nil(vim.uv.fs_stat(root .. "/out.txt"))
    vim.cmd.wincmd("p")
  end)

  it("shows the diff above the built-in vim.ui.select, drawn before it asks", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.tool("Read", { file_path = "src/app.py" }) }, { EDIT }, { H.say("ok") } }))
    local s = H.session()
    local user_win = vim.api.nvim_get_current_win()
    -- The real built-in vim.ui.select; only inputlist(), where a terminal would block
    -- reading a number, is replaced. What it sees on the screen is what the user sees.
    local inputlist = vim.fn.inputlist
    local seen = {}
    vim.fn.inputlist = function(choices)
      seen.choices = choices
      seen.screen = {}
      for row = 1, vim.o.lines do
        local cells = {}
        for col = 1, vim.o.columns do
          cells[#cells + 1] = vim.fn.screenstring(row, col)
        end
        seen.screen[#seen.screen + 1] = table.concat(cells)
      end
      local floats = vim.tbl_filter(function(win)
        return vim.api.nvim_win_get_config(win).relative ~= ""
      end, vim.api.nvim_list_wins())
      if floats[1] then
        local buf = vim.api.nvim_win_get_buf(floats[1])
        local config = vim.api.nvim_win_get_config(floats[1])
        seen.float = { filetype = vim.bo[buf].filetype, text = H.text(buf), config = config }
      end
      seen.current = vim.api.nvim_get_current_win()
      return 1 -- "Allow once"
    end
    local ok, err = pcall(H.prompt, s, "say Hi")
    vim.fn.inputlist = inputlist
    assert(ok, err)

    -- The diff float is open while the picker asks, above the rows the list of choices
    -- takes at the bottom of the screen (headless Neovim draws no floats to check on).
    assert.equals("diff", seen.float.filetype)
    assert.matches('-    return "Hello, " + name', seen.float.text, 1, true)
    assert.matches('+    return "Hi, " + name', seen.float.text, 1, true)
    local bottom = seen.float.config.row + seen.float.config.height + 2 -- borders
    assert.is_true(bottom <= vim.o.lines - #seen.choices - 1, "the float clears the list of choices")
    -- The chat was redrawn before the blocking inputlist(): its waiting state is on screen.
    local screen = table.concat(seen.screen, "\n")
    assert.matches("answer needed: Edit src/app.py", screen, 1, true)
    assert.matches("Edit src/app.py — waiting for", screen, 1, true)
    assert.matches("Tether wants to: Edit src/app.py", seen.choices[1], 1, true)
    assert.equals("1: Allow once", seen.choices[2])
    assert.equals(user_win, seen.current, "the preview does not take the cursor")
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      assert.equals("", vim.api.nvim_win_get_config(win).relative, "the preview closes with the answer")
    end
    assert.matches('return "Hi, " %+ name', H.read(root .. "/src/app.py"))
  end)

  it("shows the waiting question in a 60-column winbar", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local s = H.session()
    vim.cmd("Tether")
    local win = s.chat:windows()[1]
    vim.api.nvim_win_set_width(win, 60)
    local seen
    H.stub_select(function(items)
      seen = vim.wo[win].winbar
      return H.find(items, "kind", "allow_once")
    end)
    H.prompt(s, "write the file")
    assert.equals(60, vim.api.nvim_win_get_width(win))
    assert.matches("^%%#WarningMsg#%? answer needed: echo permitted > out%.txt", seen)
  end)
end)
