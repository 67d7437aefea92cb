-- Permission questions live in the chat: a block with the keys that answer it. Nothing takes
-- keys or focus from the window the user types in; "always" needs its key twice; a list
-- (vim.ui.select) only when asked for, and then keys typed before it was drawn are dropped.
local H = require("helpers")

local ECHO = H.tool("Bash", { command = "echo permitted > out.txt" })
local RULE = "Bash(echo permitted > out.txt)"
local EDIT = H.tool("Edit", {
  file_path = "src/app.py",
  old_string = 'return "Hello, " + name',
  new_string = 'return "Hi, " + name',
})

--- Start a turn of `s` that asks a question, and wait until its block is in the chat.
---@return fun(): tether.PromptResult? result so far
local function ask(s, text)
  local result
  H.send(s, text, function(_, r)
    result = r
  end)
  H.wait(15000, function()
    local q = require("tether.state").open_questions(s.state)[1]
    return q and H.chat(s).text:range_of("q:" .. q.id)
  end, "the question in the chat")
  return function()
    return result
  end
end

--- Type `keys` in the chat window, as the user would.
local function press(s, keys)
  local win = assert(H.chat(s):windows()[1], "the chat is shown")
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_feedkeys(vim.keycode(keys), "xt", false)
end

---@return string the question's block, as the chat shows it
local function block(s, q)
  local chat = H.chat(s)
  local range = assert(chat.text:range_of("q:" .. q.id))
  return table.concat(vim.api.nvim_buf_get_lines(chat.buf, range.row, range.row + range.size, false), "\n")
end

local function rules(root)
  local path = root .. "/.tether/settings.local.json"
  return vim.uv.fs_stat(path) and vim.json.decode(H.read(path)).permissions or nil
end

--- `vim.fn.inputlist` as the built-in list uses it, reading what is typed (digits, then
--- Enter) from the typeahead like the real one; nothing typed is Escape (0).
local function typed_inputlist(seen)
  return function(choices)
    seen[#seen + 1] = choices
    local digits = ""
    while true do
      local c = vim.fn.getchar(0)
      if c == 0 or c == 13 then
        break
      end
      digits = digits .. vim.fn.nr2char(c)
    end
    return tonumber(digits) or 0
  end
end

describe("questions in the chat", function()
  local inputlist, getcharstr = vim.fn.inputlist, vim.fn.getcharstr
  after_each(function()
    vim.fn.inputlist = inputlist
    vim.fn.getcharstr = getcharstr
    if H._notify then
      vim.notify = H._notify
      H._notify = nil
    end
    vim.cmd("silent! stopinsert")
    H.reset()
  end)

  it("are answered with ga: the command runs, no rule is saved", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }), { chat = { size = 64 } })
    local s = H.session()
    local result = ask(s, "write the file")
    local q = require("tether.state").open_questions(s.state)[1]
    local text = block(s, q)
    assert.matches("? Run this command?\n```sh\n$ echo permitted > out.txt\n```", text, 1, true)
    assert.matches("\\a  allow once", text, 1, true)
    assert.matches("\\A  always allow `" .. RULE .. "` (press twice)", text, 1, true)
    assert.matches("\\r  reject", text, 1, true)
    assert.matches("\\R  always reject `" .. RULE .. "` (press twice)", text, 1, true)
    local win = H.chat(s):windows()[1]
    assert.matches("answer needed: echo permitted", vim.wo[win].winbar, 1, true)
    H.screen("chat-64-question-pending")

    press(s, "<LocalLeader>a")
    H.wait(10000, result, "the turn to end")
    assert.equals("end_turn", result().stopReason)
    assert.equals("permitted\n", H.read(root .. "/out.txt"))
    assert.is_nil(rules(root))
    assert.equals("✓ Allowed: echo permitted > out.txt", block(s, q))
    assert.matches("✓ echo permitted > out.txt", H.chat(s):contents(), 1, true)
    assert.is_nil(vim.wo[win].winbar:find("answer needed", 1, true))
  end)

  it("reject with gr, and a rejection reads as one", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local s = H.session()
    local result = ask(s, "write the file")
    press(s, "<LocalLeader>r")
    H.wait(10000, result, "the turn to end")
    assert.is_nil(vim.uv.fs_stat(root .. "/out.txt"))
    local chat = H.chat(s):contents()
    assert.matches("⊘ Rejected: echo permitted > out.txt", chat, 1, true)
    assert.matches("⊘ echo permitted > out.txt — Rejected by you", chat, 1, true)
    assert.is_nil(chat:find("✗", 1, true))
  end)

  it("save a rule only with the 'always' key pressed twice, the rule shown in between", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") }, { ECHO }, { H.say("ok") } }))
    local s = H.session()
    -- gA, then another answer: the first press saved nothing, the second answer wins.
    local result = ask(s, "write the file")
    local q = require("tether.state").open_questions(s.state)[1]
    press(s, "<LocalLeader>A")
    assert.matches("\\A again saves the rule `" .. RULE .. "` (for this workspace)", block(s, q), 1, true)
    assert.is_true(s:question(q.id) ~= nil, "one press does not answer")
    assert.is_nil(rules(root))
    press(s, "<LocalLeader>a")
    H.wait(10000, result, "the first turn")
    assert.is_nil(rules(root))

    result = ask(s, "write it again")
    q = require("tether.state").open_questions(s.state)[1]
    press(s, "<LocalLeader>A")
    press(s, "<LocalLeader>A")
    H.wait(10000, result, "the second turn")
    assert.same({ RULE }, rules(root).allow)
    assert.equals("✓ Allowed: echo permitted > out.txt (saved the rule `" .. RULE .. "`)", block(s, q))
  end)

  it("never take what is typed in another window when they arrive", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local s = H.session()
    vim.cmd("Tether")
    vim.cmd.edit(root .. "/notes.py")
    local user_win, user_buf = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
    H._notify = vim.notify
    local notes = {}
    vim.notify = function(msg)
      notes[#notes + 1] = msg
    end
    local result
    H.send(s, "write the file", function(_, r)
      result = r
    end)
    -- Typing all along, in insert mode: digits, Enter, the chat's own answer keys. All of it
    -- is in the typeahead at once; between chunks a mapping lets the daemon's messages in
    -- (still in insert mode, with the rest of the keys waiting to be read).
    local chunks = { "y = 2\r", "2\r", "ga", "gA", "gA\r", "1\r", "\r", "gr", "\\a", "\\A\\A" }
    local after, modes = 0, {}
    vim.keymap.set("i", "<Plug>(test-wait)", function()
      if after < 10 then
        vim.wait(15)
        if #s.state.questions > 0 then
          after = after + 1
          modes[#modes + 1] = vim.api.nvim_get_mode().mode
        end
      end
    end)
    local typed, keys = {}, { "a" }
    for i = 1, 400 do
      local chunk = chunks[(i - 1) % #chunks + 1]
      typed[#typed + 1] = chunk
      keys[#keys + 1] = chunk .. "<Plug>(test-wait)"
    end
    keys[#keys + 1] = "<Esc>"
    vim.api.nvim_feedkeys(vim.keycode(table.concat(keys)), "mtx", false)
    assert.equals(10, after, "the question came while typing")
    assert.same({ "i" }, vim.fn.uniq(modes), "in insert mode")

    -- Every key went where it was typed; the question waits, unanswered.
    assert.equals((table.concat(typed):gsub("\r", "\n")), H.text(user_buf))
    assert.equals(user_win, vim.api.nvim_get_current_win())
    assert.equals(1, #s.state.questions)
    assert.is_nil(result)
    assert.is_nil(rules(root))
    assert.is_nil(vim.uv.fs_stat(root .. "/out.txt"))
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      assert.equals("", vim.api.nvim_win_get_config(win).relative, "no float opened")
    end
    assert.same({}, notes, "the chat is on screen: nothing to announce")

    press(s, "<LocalLeader>a")
    H.wait(10000, function()
      return result
    end, "the turn")
    assert.equals("permitted\n", H.read(root .. "/out.txt"))
    assert.is_nil(rules(root))
  end)

  it("with lists asked for, drop keys typed before the list was drawn", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }), { questions = { select = true, guard_ms = 200 } })
    local s = H.session()
    local seen = {}
    vim.fn.inputlist = typed_inputlist(seen)
    vim.cmd.edit(root .. "/notes.py")
    local result
    H.send(s, "write the file", function(_, r)
      result = r
    end)
    -- "2<CR>" (Always allow) typed just as the list comes up, and still unread.
    H.wait(15000, function()
      vim.api.nvim_feedkeys("2\r", "nt", false)
      return #seen > 0
    end, "the list")
    assert.equals(1, #seen, "nothing typed early answered it (no confirmation was asked)")
    assert.matches("Tether wants to: echo permitted > out.txt", seen[1][1], 1, true)
    assert.equals(1, #s.state.questions, "dismissed, the question stays open")
    assert.is_nil(rules(root))
    assert.is_nil(result)

    -- Asked again with :TetherAnswer: "Always" needs a deliberate key that ordinary typing
    -- cannot produce; Enter, a digit, or <C-y> typed while the confirmation was drawn and
    -- guarded are dropped.
    vim.fn.inputlist = function(choices)
      seen[#seen + 1] = choices
      return 2 -- "Always allow …"
    end
    local asked = {}
    vim.fn.getcharstr = function()
      asked[#asked + 1] = true
      vim.wait(150, function() -- blocks for a key, as the real one does (a while)
        return vim.fn.getchar(1) ~= 0
      end, 5)
      local c = vim.fn.getchar(0)
      return c == 0 and "" or vim.fn.nr2char(c)
    end
    for _, early in ipairs({ "\r", "1", vim.keycode("<C-y>") }) do
      vim.defer_fn(function()
        vim.api.nvim_feedkeys(early, "nt", false) -- during the confirmation's guard
      end, 60)
      vim.cmd("TetherAnswer")
      H.wait(5000, function()
        return #asked == #seen - 1
      end, "the confirmation")
      assert.equals(1, #s.state.questions, "no rule from a key typed early")
      assert.is_nil(rules(root))
    end
    vim.fn.getcharstr = function()
      return "y" -- ordinary text
    end
    vim.cmd("TetherAnswer")
    vim.wait(50)
    assert.equals(1, #s.state.questions)
    assert.is_nil(rules(root))
    vim.fn.getcharstr = function()
      return vim.keycode("<C-y>") -- pressed once the question was on screen
    end
    vim.cmd("TetherAnswer")
    H.wait(10000, function()
      return result
    end, "the turn")
    assert.same({ RULE }, rules(root).allow)
  end)

  it("answer only a question in view: a key out of view shows it first", function()
    local root = H.workspace()
    local long = ("Some words to scroll past.\n\n"):rep(40)
    H.setup(H.script(root, { { H.say(long), ECHO }, { H.say("ok") } }))
    local s = H.session()
    local result = ask(s, "write the file")
    local win = H.chat(s):windows()[1]
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
    vim.cmd("normal! zt")
    press(s, "<LocalLeader>a")
    assert.equals(1, #s.state.questions, "not answered: it was not on screen")
    press(s, "<LocalLeader>a")
    H.wait(10000, result, "the turn")
    assert.equals("permitted\n", H.read(root .. "/out.txt"))
  end)

  it("say so when the chat is not on screen, and a cancel withdraws the question", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local s = H.session()
    H._notify = vim.notify
    local notes = {}
    vim.notify = function(msg)
      notes[#notes + 1] = msg
    end
    local result
    s:prompt({ { type = "text", text = "write the file" } }, function(_, r)
      result = r
    end)
    H.wait(15000, function()
      return #s.state.questions == 1
    end, "the question")
    H.wait(2000, function()
      return #notes > 0
    end, "the notification")
    assert.matches("a question waits in the chat: echo permitted > out.txt (:Tether shows it)", notes[1], 1, true)
    assert.same({}, H.chat(s):windows(), "the chat did not open by itself")
    local q = require("tether.state").open_questions(s.state)[1]

    vim.cmd("TetherCancel")
    H.wait(10000, function()
      return result
    end, "the cancelled turn")
    assert.equals("cancelled", result.stopReason)
    assert.equals(0, #s.state.questions)
    assert.same({}, s.replies, "the daemon got its answer: cancelled")
    assert.equals("withdrawn", s.state.index["q:" .. q.id].question.status)
    assert.matches("– No answer needed any more: echo permitted > out.txt", H.chat(s):contents(), 1, true)
    assert.is_nil(vim.uv.fs_stat(root .. "/out.txt"))
  end)

  it("show an edit's diff in the block, and in a float over the list :TetherAnswer opens", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.tool("Read", { file_path = "src/app.py" }) }, { EDIT }, { H.say("ok") } }))
    local s = H.session()
    local result = ask(s, "say Hi")
    local q = require("tether.state").open_questions(s.state)[1]
    local text = block(s, q)
    assert.matches("? Allow Edit src/app.py?\n```diff\n", text, 1, true)
    assert.matches('-    return "Hello, " + name\n+    return "Hi, " + name', text, 1, true)

    local user_win = vim.api.nvim_get_current_win()
    local seen = {}
    vim.fn.inputlist = function(choices)
      seen.choices = choices
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
    vim.cmd("TetherAnswer")
    H.wait(10000, result, "the turn")
    assert.equals("diff", seen.float.filetype)
    assert.matches('+    return "Hi, " + name', seen.float.text, 1, true)
    local bottom = seen.float.config.row + seen.float.config.height + 2 -- borders
    assert.is_true(bottom <= vim.o.lines - #seen.choices - 1, "the float clears the list of choices")
    assert.equals("1: Allow once", seen.choices[2])
    assert.equals(user_win, seen.current, "the preview does not take the cursor")
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      assert.equals("", vim.api.nvim_win_get_config(win).relative, "the preview closes with the answer")
    end
    assert.matches('return "Hi, " %+ name', H.read(root .. "/src/app.py"))
  end)

  it("show the waiting question in a 60-column winbar", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local s = H.session()
    vim.cmd("Tether")
    local win = H.chat(s):windows()[1]
    vim.api.nvim_win_set_width(win, 60)
    local result = ask(s, "write the file")
    assert.equals(60, vim.api.nvim_win_get_width(win))
    assert.matches("^%%#WarningMsg#%? answer needed: echo permitted > out%.txt", vim.wo[win].winbar)
    press(s, "<LocalLeader>r")
    H.wait(10000, result, "the turn")
  end)
end)
