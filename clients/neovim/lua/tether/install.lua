--- Finding the daemon, and installing it from the Tether repository this plugin came with.
---
--- The daemon is a Python package (`tether`, command `tether`). It is not on a package
--- index: it installs from the repository (`clients/neovim` is a folder of it) with
--- `uv tool install` or `pipx install`, which put `tether` in their bin folder
--- (`~/.local/bin` unless configured). That folder is not always on Neovim's PATH, so the
--- plugin looks there too.

local M = {}

--- The repository root (with the daemon's pyproject.toml), when the plugin runs from one.
---@return string?
function M.source_dir()
  local here = debug.getinfo(1, "S").source:sub(2) -- <root>/clients/neovim/lua/tether/install.lua
  local root = vim.fn.fnamemodify(here, ":p:h:h:h:h:h")
  local fd = io.open(root .. "/pyproject.toml", "r")
  if not fd then
    return nil
  end
  local text = fd:read("*a")
  fd:close()
  if text:find('\nname = "tether"', 1, true) then
    return root
  end
end

--- Bin folders of `uv tool install` and `pipx install`.
---@return string[]
function M.bin_dirs()
  local home = vim.env.HOME or "~"
  local dirs = {}
  for _, dir in ipairs({ vim.env.UV_TOOL_BIN_DIR, vim.env.PIPX_BIN_DIR, vim.env.XDG_BIN_HOME }) do
    if dir and dir ~= "" then
      dirs[#dirs + 1] = dir
    end
  end
  dirs[#dirs + 1] = vim.fs.joinpath(home, ".local", "bin")
  return dirs
end

--- The daemon executable for `name` (cmd[1]): itself when executable (a path, or on PATH),
--- else `tether` in a tool bin folder.
---@param name string
---@return string?
function M.find(name)
  if vim.fn.executable(name) == 1 then
    return vim.fn.exepath(name)
  end
  if name ~= "tether" then
    return nil -- a configured location is taken as it is
  end
  for _, dir in ipairs(M.bin_dirs()) do
    local path = vim.fs.joinpath(dir, "tether")
    if vim.fn.executable(path) == 1 then
      return path
    end
  end
end

--- Install commands that work on this machine, best first.
---@param src string
---@return string[][]
function M.commands(src)
  local out = {}
  if vim.fn.executable("uv") == 1 then
    out[#out + 1] = { "uv", "tool", "install", "--force", src }
  end
  if vim.fn.executable("pipx") == 1 then
    out[#out + 1] = { "pipx", "install", "--force", src }
  end
  return out
end

--- What to do when the daemon is missing: exact commands.
---@return string[]
function M.advice()
  local src = M.source_dir()
  local where = src or "/path/to/tether (a clone of the Tether repository)"
  local lines = {
    ("Install it: uv tool install --force %s   (or: pipx install --force %s)"):format(where, where),
  }
  if src then
    lines[#lines + 1] = ":TetherInstall runs that from Neovim (and the plugin does when the daemon is missing)"
  end
  if vim.fn.executable("uv") == 0 and vim.fn.executable("pipx") == 0 then
    lines[#lines + 1] = "Neither uv nor pipx is installed: python3 -m pip install --user uv (or pipx) first"
  end
  lines[#lines + 1] = "Or point the plugin at it: setup({ cmd = { '/path/to/tether', 'serve' } })"
  return lines
end

--- One line for a notification.
---@param name string
---@return string
function M.missing_message(name)
  return ("cannot start the daemon: %q is not executable. %s (details: :checkhealth tether)"):format(
    name,
    M.advice()[1]
  )
end

--- Lines of installer output shown while it runs, at most one every few seconds.
local PROGRESS_EVERY_MS = 3000

--- Callbacks waiting for the install under way.
---@type fun(path: string?)[]?
local waiting = nil

--- The daemon `name` is missing. When the plugin may install it (`auto_install`, this
--- plugin inside a Tether repository, uv or pipx present) it does, saying so and showing
--- progress, and calls `cb(path)` when done; otherwise (or when that fails) it says exactly
--- what to do and calls `cb(nil)`.
---@param name string
---@param cb fun(path: string?)
function M.ensure(name, cb)
  local log = require("tether.log")
  local src = M.source_dir()
  local can = name == "tether" and require("tether.config").options.auto_install and src and #M.commands(src) > 0
  if not can then
    log.error(M.missing_message(name))
    return cb(nil)
  end
  if waiting then
    waiting[#waiting + 1] = cb
    return
  end
  waiting = { cb }
  M.run(function(ok, message)
    local found = ok and M.find("tether") or nil
    if found then
      log.info(message .. "; starting it")
    else
      log.error(ok and (message .. ", but Tether cannot find it: setup({ cmd = { '/path/to/tether', 'serve' } })")
        or message)
    end
    local callbacks = waiting or {}
    waiting = nil
    for _, fn in ipairs(callbacks) do
      fn(found)
    end
  end)
end

--- Install the daemon from the repository with uv or pipx; `cb(ok, message)` at the end.
--- With `wait`, block until done and raise on failure (for lazy.nvim's `build`, which then
--- reports the failure).
---@param cb? fun(ok: boolean, message: string)
---@param wait? boolean
function M.run(cb, wait)
  local log = require("tether.log")
  cb = cb
    or function(ok, message)
      if wait and not ok then
        error(message, 0)
      end
      (ok and log.info or log.error)(message)
    end
  local src = M.source_dir()
  if not src then
    return cb(false, "this plugin is not inside a Tether repository: " .. M.advice()[1])
  end
  local commands = M.commands(src)
  if #commands == 0 then
    return cb(false, "neither uv nor pipx is installed: python3 -m pip install --user uv (or pipx) first")
  end
  local cmd = commands[1]
  log.info(("the Tether daemon is not installed: installing it (%s); this takes a minute, once"):format(
    table.concat(cmd, " ")
  ))
  local tail = "" -- the installer's last words, for a failure
  local function done(out)
    if out.code ~= 0 then
      local last = vim.split(vim.trim(out.stderr or tail), "\n", { plain = true })
      return cb(false, ("installing the daemon failed (%s, exit %d): %s"):format(cmd[1], out.code, last[#last] or ""))
    end
    local found = M.find("tether")
    cb(true, found and ("daemon installed: " .. found) or "daemon installed; add ~/.local/bin to PATH")
  end
  if wait then
    return done(vim.system(cmd, { text = true }):wait())
  end
  local last_shown = 0
  local function progress(_, data)
    local line = data and vim.trim(data:match("([^\n]*)\n?$") or "")
    if line and line ~= "" then
      tail = line
    end
    local now = vim.uv.now()
    if line and line ~= "" and now - last_shown >= PROGRESS_EVERY_MS then
      last_shown = now
      log.info("installing the daemon: " .. line)
    end
  end
  vim.system(cmd, { text = true, stdout = progress, stderr = progress }, vim.schedule_wrap(done))
end

return M
