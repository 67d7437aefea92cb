-- The prompt area: `@` completion never inserts a match the user did not pick (whatever the
-- global 'completeopt'), and the prompt history is the workspace's, kept on disk.
local H = require("helpers")

describe("prompt area", function()
  after_each(H.reset)

  it("completes @ without inserting the first match, under the default 'completeopt'", function()
    local root = H.workspace()
    H.setup(H.script(root, {}))
    assert.equals("menu,popup", vim.go.completeopt, "Neovim's default")
    vim.cmd("Tether!")
    local s = H.session()
    local buf = H.chat(s).input.buf
    assert.equals(buf, vim.api.nvim_get_current_buf())
    -- Typing "@" opens the completion by itself (scheduled), then the user goes on typing.
    vim.api.nvim_feedkeys("i@", "xt", false)
    vim.api.nvim_feedkeys(vim.keycode("a<C-x><C-o>ca<Esc>"), "xt", false)
    assert.same({ "@ca" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false))
    -- The same keys in a buffer of the user's, with the default 'completeopt', would have
    -- inserted the first match: that is what the prompt area avoids.
    vim.cmd.enew()
    vim.bo.omnifunc = "v:lua.require'tether.mentions'.omnifunc"
    vim.b.tether_root = root
    vim.api.nvim_feedkeys(vim.keycode("i@<C-x><C-o>ca<Esc>"), "xt", false)
    assert.are_not.same({ "@ca" }, vim.api.nvim_buf_get_lines(0, 0, -1, false))
    vim.cmd("bwipeout!")
  end)

  it("keeps the workspace's prompts across Neovim runs, in stdpath('state')", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.say("one") } }))
    vim.cmd("Tether!")
    local s = H.session()
    local input = H.chat(s).input
    vim.api.nvim_feedkeys(vim.keycode("ifix the tests<CR>and the docs<Esc><CR>"), "xt", false)
    H.wait(10000, function()
      return #s.state.turns == 1 and s.state.busy == 0
    end, "the turn")
    local history = require("tether.history")
    local path = history.path(root)
    assert.is_true(vim.startswith(path, vim.fn.stdpath("state") .. "/tether/history/"))
    assert.same({ "fix the tests\nand the docs" }, vim.json.decode(H.read(path)).prompts)

    -- As after a restart: nothing in memory, the file is read.
    history.reset()
    vim.api.nvim_set_current_win(vim.fn.win_findbuf(input.buf)[1])
    vim.api.nvim_feedkeys(vim.keycode("<Up>"), "xt", false)
    assert.same({ "fix the tests", "and the docs" }, vim.api.nvim_buf_get_lines(input.buf, 0, -1, false))
    vim.cmd.wincmd("p")
  end)
end)
