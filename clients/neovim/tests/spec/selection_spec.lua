local H = require("helpers")

--- Capture the params of every `tether/prompt` the plugin sends.
---@return table[] prompts
local function capture_prompts()
  local client = require("tether.daemon")
  local prompts = {}
  local request = client.request
  client.request = function(c, method, params, cb)
    if method == "tether/prompt" then
      prompts[#prompts + 1] = params
    end
    return request(c, method, params, cb)
  end
  H._restore_request = function()
    client.request = request
  end
  return prompts
end

describe(":TetherAddSelection", function()
  after_each(function()
    if H._restore_request then
      H._restore_request()
    end
    H.reset()
  end)

  it("sends a characterwise selection as a resource_link with a utf-8 range", function()
    local root = H.workspace()
    local intl = root .. "/src/intl.txt"
    H.setup(H.script(root, {
      -- The daemon reads the selected lines from the live buffer, unsaved text included.
      { expect = { contains = "pending ✅ (unsaved)" }, blocks = { H.say("Those lines are about status.") } },
    }))
    vim.cmd.edit(intl)
    vim.api.nvim_feedkeys(vim.keycode("2GA (unsaved)<Esc>"), "xt", false)
    local prompts = capture_prompts()

    -- "pending" on line 2 through the end of line 3, in visual mode.
    vim.api.nvim_feedkeys(vim.keycode("2G0fpv3G$:TetherAddSelection<CR>"), "xt", false)
    local s = H.session()
    H.wait(5000, function()
      return #s.state.context == 1
    end, "the selection to be added")
    assert.matches("📎 `src/intl.txt:2:9-3:28` goes with the next prompt", H.chat(s):contents(), 1, true)

    vim.cmd("TetherPrompt what are these?")
    H.wait(15000, function()
      return #s.state.turns == 1 and s.state.busy == 0
    end, "the turn")
    local prompt = prompts[1].prompt
    assert.equals(2, #prompt)
    local link, text = prompt[1], prompt[2]
    assert.equals("resource_link", link.type)
    assert.equals(vim.uri_from_fname(intl), link.uri)
    local last_line = vim.api.nvim_buf_get_lines(0, 2, 3, false)[1]
    assert.same({
      start = { line = 1, character = #"status: " },
      ["end"] = { line = 2, character = #last_line }, -- bytes: utf-8 offsets
    }, link.range)
    assert.same({ type = "text", text = "what are these?" }, text)
    assert.equals(0, #s.state.context, "the selection went with that prompt only")
    local chat = H.chat(s):contents()
    assert.matches("## You\n\n📎 `src/intl.txt:2:9-3:28`\nwhat are these?", chat, 1, true)
    assert.matches("Those lines are about status.", chat, 1, true)
  end)

  it("sends exactly one selected word, from :'<,'> and from the <Plug> mapping", function()
    local root = H.workspace()
    H.setup(H.script(root, { { H.say("ok") } }))
    vim.cmd.edit(root .. "/src/app.py")
    local prompts = capture_prompts()
    -- `v` on the word "Hello" of line 2, then the command (which gets '<,'>).
    vim.api.nvim_feedkeys(vim.keycode('2G0fHviw:TetherAddSelection<CR>'), "xt", false)
    local s = H.session()
    H.wait(5000, function()
      return #s.state.context == 1
    end, "the word to be added")
    -- The same word through the <Plug> mapping, which runs in visual mode.
    vim.keymap.set("x", "<F5>", "<Plug>(tether-add-selection)")
    vim.api.nvim_feedkeys(vim.keycode("2G0fHviw<F5>"), "xt", false)
    H.wait(5000, function()
      return #s.state.context == 2
    end, "the word to be added again")
    assert.equals("n", vim.api.nvim_get_mode().mode, "the mapping leaves visual mode")
    H.prompt(s, "what is this word?")
    local col = #'    return "'
    local word = { start = { line = 1, character = col }, ["end"] = { line = 1, character = col + #"Hello" } }
    assert.same(word, prompts[1].prompt[1].range)
    assert.same(word, prompts[1].prompt[2].range)
    assert.matches("📎 `src/app.py:2:13-2:17`", H.chat(s):contents(), 1, true)
  end)

  it("sends whole lines for a line range and the whole file without one", function()
    local root = H.workspace()
    H.setup(H.script(root, {
      { expect = { contains = "app.py (lines 1-2)" }, blocks = { H.say("ok") } },
    }))
    vim.cmd.edit(root .. "/src/app.py")
    local prompts = capture_prompts()
    vim.cmd("1,2TetherAddSelection")
    vim.cmd("TetherAddSelection")
    local s = H.session()
    H.wait(5000, function()
      return #s.state.context == 2
    end, "the selections to be added")
    H.prompt(s, "look")
    local prompt = prompts[1].prompt
    assert.same({ start = { line = 0, character = 0 }, ["end"] = { line = 2, character = 0 } }, prompt[1].range)
    assert.is_nil(prompt[2].range)
    assert.matches("📎 `src/app.py:1-2`\n📎 `src/app.py`\nlook", H.chat(s):contents(), 1, true)
  end)
end)
