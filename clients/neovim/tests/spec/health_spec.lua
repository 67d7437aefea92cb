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
    assert.matches(("\n- model: %s (from setup({ model = … }))"):format(model), report, 1, true)
    assert.matches("sandbox: ", report, 1, true)
    assert.matches(("OK model: %s (chosen by setup({ model = … })): a scripted model"):format(model), report, 1, true)
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
    -- Without the daemon there is no doctor to run, and nothing claims more than that.
    assert.is_nil(report:find("tether doctor", 1, true), report)
  end)

  it("without the daemon, says exactly how to install it from this repository", function()
    H.workspace()
    local path = vim.env.PATH
    local home = vim.env.HOME
    -- No tether anywhere: not on PATH, not in the tool bin folders.
    vim.env.PATH = "/usr/bin:/bin"
    vim.env.HOME = vim.fn.tempname()
    local ok, report = pcall(function()
      require("tether").setup({})
      return checkhealth()
    end)
    vim.env.PATH, vim.env.HOME = path, home
    assert(ok, report)
    assert.matches('ERROR "tether" is not executable (not on PATH, nor in ', report, 1, true)
    local repo = vim.fs.normalize(vim.fn.fnamemodify(H.here .. "/../../..", ":p"))
    repo = repo:gsub("/$", "")
    local advice = ("uv tool install --force %s   (or: pipx install --force %s)"):format(repo, repo)
    assert.matches(advice, report, 1, true)
    -- The advice points at what exists: the daemon's own project.
    assert.matches('\nname = "tether"', H.read(repo .. "/pyproject.toml"), 1, true)
    assert.matches(":TetherInstall runs that from Neovim", report, 1, true)
  end)

  it("with the daemon installed by uv/pipx but not on PATH, finds it in their bin folder", function()
    local root = H.workspace()
    local bin = vim.fn.tempname()
    vim.fn.mkdir(bin, "p")
    local real = vim.fn.exepath("tether")
    assert.is_true(real ~= "", "the test needs the daemon on PATH to copy")
    vim.uv.fs_symlink(real, bin .. "/tether")
    local path, tool_bin = vim.env.PATH, vim.env.UV_TOOL_BIN_DIR
    vim.env.PATH = "/usr/bin:/bin"
    vim.env.UV_TOOL_BIN_DIR = bin
    local ok, report = pcall(function()
      H.setup(H.script(root, {}), { cmd = { "tether", "serve" } })
      local r = checkhealth()
      -- And the plugin starts that daemon.
      local s = H.session()
      return { r, s }
    end)
    vim.env.PATH, vim.env.UV_TOOL_BIN_DIR = path, tool_bin
    assert(ok, report)
    assert.matches(("OK command: %s/tether serve"):format(bin), report[1], 1, true)
    assert.matches("OK protocol version: 1", report[1], 1, true)
    assert.is_not_nil(report[2].id)
  end)

  it("says a Claude model without credentials will fail, and how to fix it from Neovim", function()
    H.workspace()
    local saved = {}
    for _, var in ipairs({ "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL" }) do
      saved[var] = vim.env[var]
      vim.env[var] = nil
    end
    local ok, report = pcall(function()
      require("tether").setup({ model = "anthropic:claude-sonnet-4-6" })
      return checkhealth()
    end)
    for var, value in pairs(saved) do
      vim.env[var] = value
    end
    assert(ok, report)
    -- The daemon's own answer to initialize names the model; doctor says it cannot work.
    assert.matches("- model: anthropic:claude-sonnet-4-6 (from setup({ model = … }))", report, 1, true)
    local want = "ERROR model: anthropic:claude-sonnet-4-6 (chosen by setup({ model = … })) has no API key"
    assert.matches(want, report, 1, true)
    assert.matches("set ANTHROPIC_API_KEY", report, 1, true)
    assert.matches("tether doctor --cwd ", report, 1, true)
  end)

  it("says OK for a model only once the server answered", function()
    local root = H.workspace()
    local script = H.script(root, {}):gsub("^scripted:", "")
    local port_file = root .. ".port"
    local server = vim.system({
      "python",
      "-m",
      "tether.testing.fake_anthropic",
      "--script",
      script,
      "--port-file",
      port_file,
    })
    H.wait(15000, function()
      return vim.uv.fs_stat(port_file) ~= nil
    end, "the fake Anthropic API")
    local url = "http://127.0.0.1:" .. H.read(port_file)
    local ok, report = pcall(function()
      require("tether").setup({
        model = "anthropic:claude-sonnet-4-6",
        cmd_env = { ANTHROPIC_API_KEY = "sk-ant-test", ANTHROPIC_BASE_URL = url },
      })
      return checkhealth()
    end)
    server:kill(15)
    server:wait()
    assert(ok, report)
    assert.matches("OK model: anthropic:claude-sonnet-4-6 (chosen by setup({ model = … }))", report, 1, true)
    assert.matches("URL: " .. url, report, 1, true)
  end)

  it("is not OK for a model URL nothing answers, naming the setting that chose it", function()
    H.workspace()
    local home = vim.env.XDG_CONFIG_HOME
    vim.env.XDG_CONFIG_HOME = vim.fn.tempname()
    local settings = vim.env.XDG_CONFIG_HOME .. "/tether/settings.json"
    vim.fn.mkdir(vim.fs.dirname(settings), "p")
    -- Port 9 (discard) on the loopback: nothing listens there.
    H.write(settings, vim.json.encode({ model = "openai:qwen@http://127.0.0.1:9/v1" }))
    local ok, report = pcall(function()
      require("tether").setup({})
      return checkhealth()
    end)
    vim.env.XDG_CONFIG_HOME = home
    assert(ok, report)
    assert.matches("ERROR model: openai:qwen@http://127.0.0.1:9/v1 (chosen by model in " .. settings, report, 1, true)
    assert.matches("cannot connect to http://127.0.0.1:9/v1", report, 1, true)
    assert.is_nil(report:find("OK model: openai", 1, true), report)
  end)

  it("says a project's model waits for the folder to be trusted", function()
    local root = H.workspace()
    H.write(root .. "/.tether/settings.json", vim.json.encode({ model = "openai:qwen@http://127.0.0.1:9/v1" }))
    require("tether").setup({})
    local report = checkhealth()
    assert.matches("waits until this folder is trusted", report, 1, true)
    assert.is_nil(report:find("OK model: openai", 1, true), report)
    assert.matches("ERROR model: ", report, 1, true)
  end)
end)
