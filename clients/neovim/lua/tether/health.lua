--- `:checkhealth tether`: Neovim version, the daemon (command, version, protocol version, the
--- model its `initialize` reports for this workspace), then `tether doctor`'s findings (the
--- sandbox, whether the model answers and what chose it, trust, settings).
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
    initializationOptions = require("tether.daemon").init_options(),
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

--- The daemon: its command, version, protocol, and the model its `initialize` reports.
---@param root string
---@return string[]? cmd The daemon's argv with its program found, if it is there.
local function check_daemon(root)
  local opts = require("tether.config").options
  health.start("Daemon")
  local install = require("tether.install")
  local cmd = vim.deepcopy(opts.cmd)
  local path = install.find(cmd[1])
  if not path then
    local dirs = table.concat(install.bin_dirs(), ", ")
    health.error(("%q is not executable (not on PATH, nor in %s)"):format(cmd[1], dirs), install.advice())
    return nil
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
    return cmd
  end
  local ours = vim.tbl_get(result, "capabilities", "experimental", "tether") or {}
  if ours.protocolVersion == 1 then
    health.ok("protocol version: 1")
  elseif ours.protocolVersion then
    health.warn(("protocol version %s; this plugin speaks version 1"):format(ours.protocolVersion))
  else
    health.error("the server does not announce a Tether protocol version: is it the Tether daemon?")
  end
  if type(ours.model) == "string" then
    local source = ours.modelSource == "initializationOptions" and "setup({ model = … })" or ours.modelSource
    -- Whether it answers is doctor's to say (below).
    health.info(("model: %s (from %s)"):format(ours.model, source or "the daemon's defaults"))
  elseif ours.protocolVersion then
    health.error("no model: " .. tostring(ours.modelReason or "none is configured"), {
      "Set ANTHROPIC_API_KEY (in Neovim: :let $ANTHROPIC_API_KEY = '…', then :TetherRestart)",
      "Or setup({ model = 'openai:qwen2.5-coder@http://localhost:11434/v1' }) for a local server",
    })
  end
  return cmd
end

--- `tether doctor`'s findings that say nothing more here: the editors found on PATH, and
--- `tether` missing from PATH (the plugin also looks in the uv/pipx bin folders, and the
--- Daemon section says which command it starts).
---@param finding tether.DoctorFinding
---@return boolean
local function relevant(finding)
  if finding.area == "clients" then
    return false
  end
  return not (finding.area == "install" and finding.summary:find("not on PATH", 1, true))
end

---@class (exact) tether.DoctorFinding
---@field area string
---@field status "ok"|"warn"|"fail"|"info"
---@field summary string
---@field details string[]
---@field fix string?

--- `tether doctor --json` for this workspace, with the model and environment the plugin
--- gives the daemon: the sandbox, the model (reached, with what chose it), trust, settings.
---@param cmd string[] The daemon's argv, its program resolved.
---@param root string
local function check_doctor(cmd, root)
  local opts = require("tether.config").options
  health.start("tether doctor")
  local argv = version_cmd(cmd)
  argv[#argv] = "doctor"
  vim.list_extend(argv, { "--json", "--cwd", root })
  local model = require("tether.daemon").init_options().model
  if type(model) == "string" then
    vim.list_extend(argv, { "--model", model })
  end
  local out = vim.system(argv, { text = true, env = opts.cmd_env, cwd = root }):wait(30000)
  local ok, report = pcall(vim.json.decode, out.stdout or "", { luanil = { object = true } })
  if not ok or type(report) ~= "table" or type(report.findings) ~= "table" then
    health.error(("`%s` did not give a report (exit %s): %s"):format(
      table.concat(argv, " "),
      tostring(out.code),
      vim.trim(out.stderr or "")
    ), { "Run it in a terminal; upgrade the daemon if it has no doctor command (:TetherInstall)" })
    return
  end
  health.info(("the checks of `tether doctor --cwd %s`%s (run it in a terminal for the same report)"):format(
    root,
    type(model) == "string" and " --model " .. model or ""
  ))
  for _, f in ipairs(report.findings --[[@as tether.DoctorFinding[] ]]) do
    if relevant(f) then
      -- The model the plugin passes is what `setup()` chose, not a command-line flag.
      local summary = f.summary
      if type(model) == "string" then
        summary = summary:gsub("chosen by %-%-model", "chosen by setup({ model = … })")
      end
      local text = ("%s: %s"):format(f.area, summary)
      if #(f.details or {}) > 0 then
        text = text .. "\n" .. table.concat(f.details, "\n")
      end
      local advice = f.fix and { f.fix } or nil
      if f.status == "ok" then
        health.ok(text)
      elseif f.status == "warn" then
        health.warn(text, advice)
      elseif f.status == "fail" then
        health.error(text, advice)
      else
        health.info(text .. (f.fix and ("\n" .. f.fix) or ""))
      end
    end
  end
end

function M.check()
  require("tether.config").ensure()
  local root = require("tether.daemon").root_for(0)
  check_neovim()
  local cmd = check_daemon(root)
  if cmd then
    check_doctor(cmd, root)
  end
end

return M
