local H = require("helpers")

--- Run `:checkhealth tether` and return the report's text.
---@return string
local function checkhealth()
  vim.cmd("checkhealth tether")
  local text = H.text(vim.api.nvim_get_current_buf())
  vim.cmd("bwipeout!")
  return text
end

describe(":checkhealth tether", function()
  after_each(H.reset)

  it("reports the daemon, protocol, sandbox and model without a running daemon", function()
    local root = H.workspace()
    local model = H.script(root, {})
    H.setup(model)
    local report = checkhealth()
    assert.matches("OK Neovim 0.11", report, 1, true)
    assert.matches("OK command: ", report, 1, true)
    assert.matches("OK daemon version: tether %d+%.%d+", report)
    assert.matches("OK protocol version: 1", report, 1, true)
    assert.matches("bubblewrap", report, 1, true)
    assert.matches(("OK model: %s (from setup({ model = … }))"):format(model), report, 1, true)
    assert.equals(0, #vim.lsp.get_clients({ name = "tether" }), "the probe daemon is gone")
  end)

  it("uses the running daemon when there is one", function()
    local root = H.workspace()
    H.setup(H.script(root, {}))
    local s = H.session()
    local report = checkhealth()
    assert.matches(("OK running for %s (client id %d)"):format(root, s.client_id), report, 1, true)
    assert.matches("OK protocol version: 1", report, 1, true)
  end)

  it("reports what is missing", function()
    H.workspace()
    local saved = {}
    for _, var in ipairs({ "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL" }) do
      saved[var] = vim.env[var]
      vim.env[var] = nil
    end
    require("tether").setup({ cmd = { "/nonexistent/tether", "serve" } })
    local report = checkhealth()
    for var, value in pairs(saved) do
      vim.env[var] = value
    end
    assert.matches('ERROR "/nonexistent/tether" is not executable', report, 1, true)
    assert.matches("ERROR no model provider is configured", report, 1, true)
  end)

  it("finds the model in the workspace settings", function()
    local root = H.workspace()
    H.write(root .. "/.tether/settings.json", vim.json.encode({ model = "openai:qwen@http://localhost:1/v1" }))
    require("tether").setup({})
    local report = checkhealth()
    local want = ("OK model: openai:qwen@http://localhost:1/v1 (from %s/.tether/settings.json)"):format(root)
    assert.matches(want, report, 1, true)
  end)
end)
