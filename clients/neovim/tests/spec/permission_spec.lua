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
    assert.matches("✗ echo permitted > out.txt", s.chat:contents(), 1, true)
  end)

  it("treats a dismissed picker as a cancelled question", function()
    local root = H.workspace()
    H.setup(H.script(root, { { ECHO }, { H.say("ok") } }))
    local calls = H.stub_select(function()
      return nil
    end)
    local s = H.session()
    H.prompt(s, "write the file")
    assert.equals(1, #calls)
    assert.is_nil(vim.uv.fs_stat(root .. "/out.txt"))
  end)

  it("previews an edit as a diff in a float while asking", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.tool("Read", { file_path = "src/app.py" }) }, { EDIT }, { H.say("ok") } }))
    local s = H.session()
    local seen = {}
    local user_win = vim.api.nvim_get_current_win()
    H.stub_select(function(items)
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        if vim.api.nvim_win_get_config(win).relative ~= "" then
          local buf = vim.api.nvim_win_get_buf(win)
          seen.filetype = vim.bo[buf].filetype
          seen.diff = H.text(buf)
        end
      end
      seen.winbar = vim.wo[s.chat:windows()[1]].winbar
      seen.current = vim.api.nvim_get_current_win()
      return H.find(items, "kind", "allow_once")
    end)
    H.prompt(s, "say Hi")

    assert.equals("diff", seen.filetype)
    assert.matches('-    return "Hello, " + name', seen.diff, 1, true)
    assert.matches('+    return "Hi, " + name', seen.diff, 1, true)
    assert.matches("waiting for permission: Edit src/app.py", seen.winbar, 1, true)
    assert.equals(user_win, seen.current, "the preview does not take the cursor")
    -- The preview closes with the answer, and the edit went through.
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      assert.equals("", vim.api.nvim_win_get_config(win).relative)
    end
    assert.matches('return "Hi, " %+ name', H.read(root .. "/src/app.py"))
  end)
end)
