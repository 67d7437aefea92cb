-- :help tether, and the <Plug> mappings it documents: they exist and run.
local H = require("helpers")

local PLUGS = {
  "open", "focus", "prompt", "add-selection", "cancel", "sessions", "mode", "rewind", "tasks",
  "answer", "restart", "install", "allow", "allow-edits", "reject", "always-allow", "always-reject", "select",
  "review", "next-hunk", "prev-hunk", "keep-hunk", "undo-hunk", "keep-file", "undo-file",
}

describe("help and mappings", function()
  after_each(function()
    if H._notify then
      vim.notify = H._notify
      H._notify = nil
    end
    H.reset()
  end)

  it(":help tether opens, with a tag for every command and <Plug> mapping", function()
    -- The plugin ships its tags (plugin managers do not generate them for a subfolder):
    -- they must be what :helptags makes of the help file now.
    local copy = vim.fn.tempname()
    vim.fn.mkdir(copy .. "/doc", "p")
    vim.uv.fs_copyfile(H.here .. "/../doc/tether.txt", copy .. "/doc/tether.txt")
    vim.cmd.helptags(copy .. "/doc") -- an error (e.g. a duplicate tag) fails the test
    assert.equals(H.read(copy .. "/doc/tags"), H.read(H.here .. "/../doc/tags"), "doc/tags is up to date")
    vim.opt.runtimepath:prepend(copy)
    vim.cmd.help("tether")
    assert.equals("help", vim.bo.buftype)
    assert.matches("tether.txt", vim.api.nvim_buf_get_name(0), 1, true)
    local tags = H.read(copy .. "/doc/tags")
    local commands = vim.tbl_keys(vim.api.nvim_get_commands({}))
    local ours = vim.tbl_filter(function(name)
      return vim.startswith(name, "Tether")
    end, commands)
    assert.equals(12, #ours)
    for _, name in ipairs(ours) do
      assert.matches("\n:" .. name .. "\t", "\n" .. tags, 1, true)
    end
    for _, plug in ipairs(PLUGS) do
      assert.matches(("<Plug>(tether-%s)\t"):format(plug), tags, 1, true)
    end
    local wanted = {
      "tether-install", "tether-questions", "tether-question-keys", "tether-prompt-area", "tether-options",
      "tether-saving", "tether-review",
    }
    for _, tag in ipairs(wanted) do
      assert.matches("\n" .. tag .. "\t", "\n" .. tags, 1, true)
    end
    vim.cmd.helpclose()
  end)

  it("has a <Plug> mapping for every command, and they run", function()
    local root = H.workspace()
    H.setup(H.script(root, {}))
    for _, plug in ipairs(PLUGS) do
      local lhs = ("<Plug>(tether-%s)"):format(plug)
      assert.is_true(vim.fn.maparg(lhs, "n") ~= "", lhs .. " in normal mode")
    end
    assert.is_true(vim.fn.maparg("<Plug>(tether-add-selection)", "x") ~= "", "add-selection in visual mode")

    local messages = {}
    H._notify = vim.notify
    vim.notify = function(msg)
      messages[#messages + 1] = msg
    end
    local function press(plug)
      vim.api.nvim_feedkeys(vim.keycode(("<Plug>(tether-%s)"):format(plug)), "x", false)
    end
    local function said(text)
      H.wait(5000, function()
        return vim.iter(messages):any(function(m)
          return m:find(text, 1, true) ~= nil
        end)
      end, ("%q to be said"):format(text))
    end

    vim.cmd.edit(root .. "/src/app.py")
    press("open")
    local s = H.session()
    H.wait(5000, function()
      return #H.chat(s):windows() == 1
    end, "the chat")
    assert.are_not.equal(H.chat(s).buf, vim.api.nvim_get_current_buf(), "open keeps the cursor")
    press("focus")
    assert.equals(H.chat(s).input.buf, vim.api.nvim_get_current_buf())
    vim.cmd.wincmd("p")

    press("add-selection")
    H.wait(5000, function()
      return #s.state.context == 1
    end, "the file to be attached")
    press("cancel")
    said("no turn is running")
    press("tasks")
    said("no background tasks")
    press("answer")
    said("no question is waiting")
    press("rewind")
    said("nothing to rewind")
    press("review")
    said("no pending changes of Tether")
    press("next-hunk")
    said("no pending changes of Tether in this buffer")
    press("keep-hunk")
    said("the cursor is on no change of Tether")
    press("undo-file")
    said("no changes of Tether in this buffer")

    local asked = {}
    H.stub_select(function(_, opts)
      asked[#asked + 1] = opts.kind
      return nil
    end)
    press("mode")
    press("sessions")
    H.wait(5000, function()
      return #asked == 1 or vim.iter(messages):any(function(m)
        return m:find("no sessions yet", 1, true) ~= nil
      end)
    end, "the sessions picker (or its message)")
    assert.equals("tether.mode", asked[1])

    local input = vim.ui.input
    local prompted
    vim.ui.input = function(opts)
      prompted = opts.prompt
    end
    press("prompt")
    vim.ui.input = input
    assert.equals("Tether> ", prompted)

    local install = require("tether.install")
    local run = install.run
    local installs = 0
    install.run = function()
      installs = installs + 1
    end
    press("install")
    install.run = run
    assert.equals(1, installs)

    local old = s.client_id
    press("restart")
    H.wait(20000, function()
      return s.client_id ~= old and H.registry():current_of(root) == s
    end, "the restart")
  end)
end)
