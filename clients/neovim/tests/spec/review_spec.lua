-- Reviewing a turn's changes hunk by hunk: signs in the real buffer, ]h/[h, keep/undo the
-- hunk under the cursor, and the review list (:TetherReview, quickfix). One turn makes three
-- hunks in two files: one is undone from the buffer, one kept, the third undone from the
-- list. Screens are saved as artifacts ($TETHER_SCREEN_DIR).
local H = require("helpers")

local function edit(file, from, to)
  return H.tool("Edit", { file_path = file, old_string = from, new_string = to })
end

--- Type like a user: keys through the input queue, mappings included.
local function keys(k)
  vim.api.nvim_feedkeys(vim.keycode(k), "mxt", false)
end

--- The sign-column text of each line of the current window, as on screen.
local function signs_on_screen(rows)
  local pos = vim.fn.win_screenpos(0)
  local out = {}
  for line = 1, vim.api.nvim_buf_line_count(0) do
    local row = rows[pos[1] + line - 1]
    out[line] = row and vim.fn.strcharpart(row, pos[2] - 1, 1) or ""
  end
  return out
end

describe("review", function()
  after_each(H.reset)

  it("acts only on its own review list: not a location list, and it follows behind :colder", function()
    local root = H.workspace()
    local app = root .. "/src/app.py"
    H.setup(H.script(root, {
      { H.tool("Read", { file_path = "src/app.py" }) },
      { edit("src/app.py", "def greet(", "def welcome("), edit("src/app.py", "def farewell(", "def goodbye(") },
      { H.say("done") },
    }), { permission_mode = "acceptEdits" })
    vim.cmd.edit(app)
    local s = H.session()
    assert.equals("end_turn", H.prompt(s, "rename").stopReason)
    H.wait(10000, function()
      return s.state.changes.counts.pending == 2
    end, "two pending hunks")
    vim.cmd("TetherReview")
    H.wait(10000, function()
      return vim.bo.buftype == "quickfix"
    end, "the review list")
    vim.cmd.wincmd("p")
    -- A location list whose window looks the same: its keys do nothing of Tether's.
    vim.fn.setloclist(0, { { filename = app, lnum = 1, text = "a lint warning" } })
    vim.cmd("lopen")
    assert.equals(1, vim.fn.getwininfo(vim.api.nvim_get_current_win())[1].loclist)
    keys("<Plug>(tether-undo-hunk)") -- as a global mapping of the user's would
    vim.wait(300)
    assert.equals(2, s.state.changes.counts.pending, "nothing undone from the location list")
    vim.cmd("lclose")
    -- The user's own list on top; the review list behind it still follows.
    vim.fn.setqflist({}, " ", { title = "grep", items = { { filename = app, lnum = 2, text = "grep hit" } } })
    vim.cmd("copen")
    keys("<Plug>(tether-undo-hunk)")
    vim.wait(300)
    assert.equals(2, s.state.changes.counts.pending, "nothing undone from another quickfix list")
    vim.cmd.wincmd("p")
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    keys("<LocalLeader>k")
    H.wait(10000, function()
      return s.state.changes.counts.pending == 1
    end, "one kept")
    vim.wait(100)
    vim.cmd("colder")
    assert.equals("Tether review", vim.fn.getqflist({ title = 0 }).title)
    assert.equals(1, #vim.fn.getqflist(), "the review list has the one pending hunk left")
  end)

  it("puts back the user's own buffer-local ]h when its hunks are gone", function()
    local root = H.workspace()
    local app = root .. "/src/app.py"
    H.setup(H.script(root, {
      { H.tool("Read", { file_path = "src/app.py" }) },
      { edit("src/app.py", "def greet(", "def welcome(") },
      { H.say("done") },
    }), { permission_mode = "acceptEdits" })
    vim.cmd.edit(app)
    local buf = vim.api.nvim_get_current_buf()
    local theirs = 0
    vim.keymap.set("n", "]h", function()
      theirs = theirs + 1
    end, { buffer = buf, desc = "next git hunk" })
    local s = H.session()
    assert.equals("end_turn", H.prompt(s, "rename").stopReason)
    H.wait(10000, function()
      return s.state.changes.counts.pending == 1
    end, "one pending hunk")
    vim.api.nvim_set_current_win(vim.fn.bufwinid(buf))
    assert.equals("Tether: next hunk", vim.fn.maparg("]h", "n", false, true).desc)
    keys("<LocalLeader>u")
    H.wait(10000, function()
      return s.state.changes.counts.pending == 0
    end, "undone")
    H.wait(5000, function()
      return vim.fn.maparg("]h", "n", false, true).desc == "next git hunk"
    end, "the user's ]h back")
    keys("]h")
    assert.equals(1, theirs)
    assert.equals("", vim.fn.maparg("<LocalLeader>k", "n"), "Tether's own keys gone")
    assert.equals("def greet(name: str) -> str:", vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
  end)

  it("keeps and undoes a turn's hunks from the buffer and from the review list", function()
    local root = H.workspace()
    local app, readme = root .. "/src/app.py", root .. "/README.md"
    H.setup(H.script(root, {
      { H.tool("Read", { file_path = "src/app.py" }), H.tool("Read", { file_path = "README.md" }) },
      {
        edit("src/app.py", "def greet(", "def welcome("),
        edit("src/app.py", "def farewell(", "def goodbye("),
        edit("README.md", "A fixture workspace", "The fixture workspace"),
      },
      { H.say("three changes") },
    }), { permission_mode = "acceptEdits", chat = { size = 40 } })
    vim.cmd.edit(app)
    local buf, win = vim.api.nvim_get_current_buf(), vim.api.nvim_get_current_win()
    vim.wo[win].signcolumn = "yes"
    local s = H.session()
    assert.equals("end_turn", H.prompt(s, "rename both, fix the readme").stopReason)
    H.wait(10000, function()
      return s.state.changes.counts.pending == 3
    end, "three pending hunks")
    vim.api.nvim_set_current_win(win)
    local signs = signs_on_screen(H.screen("review-1-three-pending"))
    assert.same({ "┃", " ", " ", " ", "┃", " " }, signs)

    -- [h from line 3 goes to the first hunk; \u undoes it, in the buffer and on disk.
    vim.api.nvim_win_set_cursor(win, { 3, 0 })
    keys("[h")
    assert.equals(1, vim.api.nvim_win_get_cursor(win)[1])
    keys("<LocalLeader>u")
    H.wait(10000, function()
      return s.state.changes.counts.pending == 2
    end, "the first hunk undone")
    assert.equals("def greet(name: str) -> str:", vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
    assert.matches("def greet%(", H.read(app))
    assert.matches("def goodbye%(", H.read(app), nil, "the other hunk stays")
    assert.same({ " ", " ", " ", " ", "┃", " " }, signs_on_screen(H.screen("review-2-first-undone")))
    -- `u` right afterwards takes the undo back (one undo step); redo and save put it again.
    vim.cmd("normal! u")
    assert.equals("def welcome(name: str) -> str:", vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])
    vim.api.nvim_exec_autocmds("TextChanged", { buffer = buf }) -- as after a key typed
    -- The hunk is pending again, and its sign and the counts say so.
    H.wait(10000, function()
      return s.state.changes.counts.pending == 3
    end, "the hunk pending again after u")
    assert.same({ "┃", " ", " ", " ", "┃", " " }, signs_on_screen(H.screen("review-2b-after-u")))
    vim.cmd("redo")
    vim.api.nvim_exec_autocmds("TextChanged", { buffer = buf })
    H.wait(10000, function()
      return s.state.changes.counts.pending == 2
    end, "undone again after redo")
    vim.cmd("silent write")
    assert.equals("def greet(name: str) -> str:", vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1])

    -- ]h moves to the second hunk; \k keeps it: its sign says kept.
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
    keys("]h")
    assert.equals(5, vim.api.nvim_win_get_cursor(win)[1])
    keys("<LocalLeader>k")
    H.wait(10000, function()
      return s.state.changes.counts.kept == 1
    end, "the second hunk kept")
    assert.matches("def goodbye%(", H.read(app))
    assert.same({ " ", " ", " ", " ", "┆", " " }, signs_on_screen(H.screen("review-3-second-kept")))

    -- A file opened after the turn gets its signs when it is shown.
    vim.cmd.split(readme)
    local marks = vim.api.nvim_buf_get_extmarks(0, require("tether.review").ns, 0, -1, { details = true })
    assert.equals(1, #marks)
    assert.same({ 2, "┃ " }, { marks[1][2], marks[1][4].sign_text })
    assert.is_true(vim.fn.maparg("<LocalLeader>u", "n", false, true).buffer == 1, "the review keys are there")
    vim.cmd.close()
    vim.api.nvim_set_current_win(win)

    -- The review list holds the one pending hunk left; \u there undoes it.
    vim.cmd("TetherReview")
    H.wait(10000, function()
      return vim.bo.buftype == "quickfix"
    end, "the review list")
    local list = vim.fn.getqflist()
    assert.equals(1, #list)
    assert.equals(readme, vim.api.nvim_buf_get_name(list[1].bufnr))
    assert.equals(3, list[1].lnum)
    assert.matches("fixture workspace", list[1].text)
    H.screen("review-4-list")
    keys("<LocalLeader>u")
    H.wait(10000, function()
      return s.state.changes.counts.pending == 0
    end, "the third hunk undone")
    assert.equals(H.read(H.fixture .. "/README.md"), H.read(readme))
    assert.equals(0, #vim.fn.getqflist(), "the list follows")
    local counts = s.state.changes.counts
    assert.same({ pending = 0, kept = 1, undone = 2, conflicts = 0 }, counts)
    H.screen("review-5-done")
  end)
end)
