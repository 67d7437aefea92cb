--- `:checkhealth tether`: Neovim version, the daemon (command, version, protocol version),
--- the shell sandbox, and which model provider is configured (with the credentials it needs).
---
--- It needs nothing but this folder on 'runtimepath': no `setup()`, no plugin/ file sourced
--- (a lazy-loaded plugin manager may not have loaded the plugin yet).

local M = {}

local health = vim.health

--- The daemon's argv with "--version" in place of "serve" and what follows it.
---@param cmd string[]
---@return string[]
local function version_cmd(cmd)
  local out = {}
  for _, arg in ipairs(cmd) do
    if arg == "serve" then
      break
    end
    out[#out + 1] = arg
  end
  out[#out + 1] = "--version"
  return out
end

--- `initialize` with a short-lived daemon, for when no client is running yet.
---@param cmd string[]
---@param env? table<string, string>
---@param root string
---@return table? result, string? error
function M.handshake(cmd, env, root)
  local done, result, failure = false, nil, nil
  local ok, rpc = pcall(vim.lsp.rpc.start, cmd, {
    notification = function() end,
    server_request = function()
      return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.MethodNotFound)
    end,
    on_error = function(_, err)
      failure = failure or tostring(err)
    end,
    on_exit = function(code)
      if not done then
        done, failure = true, failure or ("the daemon exited with code %d"):format(code)
      end
    end,
  }, { cwd = root, env = env })
  if not ok then
    return nil, tostring(rpc)
  end
  local folder = { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) }
  rpc.request("initialize", {
    processId = vim.fn.getpid(),
    rootUri = folder.uri,
    workspaceFolders = { folder },
    capabilities = {},
  }, function(err, res)
    done, result, failure = true, res, err and (err.message or vim.inspect(err)) or nil
  end)
  vim.wait(15000, function()
    return done
  end, 20)
  if result then
    -- A clean shutdown, but no waiting for the process to end: this daemon has no sessions.
    local answered = false
    rpc.request("shutdown", nil, function()
      answered = true
      rpc.notify("exit")
    end)
    vim.wait(2000, function()
      return answered
    end, 10)
  end
  rpc.terminate()
  if not done then
    failure = "no answer to initialize within 15 s"
  end
  return result, failure
end

--- Settings files that may hold `model`, `apiKeyHelper` or `env`, most specific first.
---@param root string
---@return string[]
local function settings_files(root)
  local config_home = vim.env.XDG_CONFIG_HOME or vim.fs.joinpath(vim.env.HOME or "~", ".config")
  return {
    vim.fs.joinpath(root, ".tether", "settings.local.json"),
    vim.fs.joinpath(root, ".tether", "settings.json"),
    vim.fs.joinpath(config_home, "tether", "settings.json"),
  }
end

---@param path string
---@return string?
local function model_in(path)
  local fd = io.open(path, "r")
  if not fd then
    return nil
  end
  local ok, data = pcall(vim.json.decode, fd:read("*a"))
  fd:close()
  return ok and type(data) == "table" and type(data.model) == "string" and data.model or nil
end

--- Which model the daemon will use, and where that comes from (most specific first, as the
--- daemon merges settings).
---@param root string
---@return string? model, string source
function M.model_source(root)
  local opts = require("tether.config").options
  if opts.init_options.model or opts.model then
    return opts.init_options.model or opts.model, "setup({ model = … })"
  end
  for _, path in ipairs(settings_files(root)) do
    local model = model_in(path)
    if model then
      return model, path
    end
  end
  for _, var in ipairs({ "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL" }) do
    if (opts.cmd_env and opts.cmd_env[var]) or vim.env[var] then
      return "anthropic (default model)", "$" .. var
    end
  end
  return nil, "nothing"
end

local function check_neovim()
  health.start("Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. version)
  else
    -- 0.11 brought the `client:request()` method API and `vim.lsp.start({ attach = false })`.
    health.error("Neovim " .. version .. " is too old: Tether needs 0.11 or newer")
  end
end

---@param root string
local function check_daemon(root)
  local opts = require("tether.config").options
  health.start("Daemon")
  local install = require("tether.install")
  local cmd = vim.deepcopy(opts.cmd)
  local path = install.find(cmd[1])
  if not path then
    local dirs = table.concat(install.bin_dirs(), ", ")
    health.error(("%q is not executable (not on PATH, nor in %s)"):format(cmd[1], dirs), install.advice())
    return
  end
  cmd[1] = path
  health.ok("command: " .. table.concat(cmd, " "))
  local out = vim.system(version_cmd(cmd), { text = true, env = opts.cmd_env }):wait(10000)
  if out.code == 0 then
    health.ok("daemon version: " .. vim.trim(out.stdout or ""))
  else
    health.warn("could not ask the daemon for its version: " .. vim.trim(out.stderr or ""))
  end
  local running = require("tether.daemon").get(root)
  local result, err
  if running and running.initialized then
    result = { capabilities = running.server_capabilities, serverInfo = running.server_info }
    health.ok(("running for %s (client id %d)"):format(root, running.id))
  else
    result, err = M.handshake(cmd, opts.cmd_env, root)
  end
  if not result then
    health.error("the daemon did not complete initialize: " .. tostring(err))
    return
  end
  local ours = vim.tbl_get(result, "capabilities", "experimental", "tether") or {}
  if ours.protocolVersion == 1 then
    health.ok("protocol version: 1")
  elseif ours.protocolVersion then
    health.warn(("protocol version %s; this plugin speaks version 1"):format(ours.protocolVersion))
  else
    health.error("the server does not announce a Tether protocol version: is it the Tether daemon?")
  end
end

local function check_sandbox()
  health.start("Shell sandbox")
  if vim.fn.executable("bwrap") ~= 1 then
    health.warn("bubblewrap (bwrap) is not installed: shell commands run without a sandbox", {
      "Install it: apt install bubblewrap (Debian/Ubuntu), dnf install bubblewrap (Fedora)",
    })
    return
  end
  local probe = vim.system({ "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "true" }):wait(5000)
  if probe.code == 0 then
    health.ok("bubblewrap is available and works: shell commands can run sandboxed")
  else
    health.warn("bubblewrap is installed but cannot create a sandbox here: " .. vim.trim(probe.stderr or ""), {
      "Unprivileged user namespaces may be disabled (kernel.unprivileged_userns_clone)",
    })
  end
end

--- Where the daemon would find Anthropic credentials, or nil.
---@param root string
---@return string?
function M.anthropic_credentials(root)
  local opts = require("tether.config").options
  for _, var in ipairs({ "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE" }) do
    if (opts.cmd_env and opts.cmd_env[var]) or (vim.env[var] and vim.env[var] ~= "") then
      return "$" .. var
    end
  end
  for _, path in ipairs(settings_files(root)) do
    local fd = io.open(path, "r")
    if fd then
      local ok, data = pcall(vim.json.decode, fd:read("*a"))
      fd:close()
      if ok and type(data) == "table" then
        if type(data.apiKeyHelper) == "string" then
          return "apiKeyHelper in " .. path
        end
        local env = type(data.env) == "table" and data.env or {}
        if env.ANTHROPIC_API_KEY or env.ANTHROPIC_AUTH_TOKEN then
          return "env in " .. path
        end
      end
    end
  end
end

--- Is `model` served by Anthropic's API (which needs credentials)?
---@param model string
---@return boolean
local function is_anthropic(model)
  local kind = model:match("^(%w+):")
  if kind then
    return kind == "anthropic"
  end
  return model:find("^anthropic") ~= nil
    or model:find("^claude") ~= nil
    or vim.tbl_contains({ "sonnet", "opus", "haiku" }, model)
end

---@param root string
local function check_model(root)
  health.start("Model provider")
  local model, source = M.model_source(root)
  if not model then
    health.error("no model provider is configured", {
      "Set ANTHROPIC_API_KEY (in Neovim: :let $ANTHROPIC_API_KEY = '…', then :TetherRestart)",
      "Or setup({ model = 'anthropic:claude-sonnet-4-6' })",
      "Local models: setup({ model = 'openai:qwen2.5-coder@http://localhost:11434/v1' })",
    })
    return
  end
  if is_anthropic(model) then
    local credentials = M.anthropic_credentials(root)
    if not credentials then
      local what = ("model: %s (from %s), but no Anthropic credentials are set: prompts will fail"):format(
        model,
        source
      )
      health.error(what, {
        "Set ANTHROPIC_API_KEY (in Neovim: :let $ANTHROPIC_API_KEY = '…', then :TetherRestart)",
        "Or ANTHROPIC_AUTH_TOKEN, or an apiKeyHelper in .tether/settings.json",
        "Or pick a local model: setup({ model = 'openai:<model>@http://localhost:11434/v1' })",
      })
      return
    end
    health.ok(("model: %s (from %s; credentials: %s)"):format(model, source, credentials))
    return
  end
  health.ok(("model: %s (from %s)"):format(model, source))
end

function M.check()
  require("tether.config").ensure()
  local root = require("tether.daemon").root_for(0)
  check_neovim()
  check_daemon(root)
  check_sandbox()
  check_model(root)
end

return M
