--- Options of `require("tether").setup()`: types, defaults, and the merge that validates them.
--- A bad option warns and falls back to its default, so a typo never leaves the plugin dead.

---@alias tether.Mode "default"|"acceptEdits"|"plan"|"bypassPermissions"|"dontAsk"
---@alias tether.ChatPosition "right"|"left"|"above"|"below"

---@class (exact) tether.ChatConfig
---@field position tether.ChatPosition Where the chat split opens.
---@field size number Width (left/right) or height (above/below): columns/rows, or a fraction of the editor if < 1.
---@field follow boolean Keep the chat scrolled to the end while the agent streams (unless you moved its cursor up).
---@field max_tool_lines integer Lines of tool output kept per tool call block (the rest is elided).
---@field input_height integer Lines of the prompt area below the chat.
---@field keymaps table<string, string|false> Buffer-local keys (false disables one): prompt (chat: the prompt
--- area, or the question under the cursor), send / send_insert (prompt area, normal / insert mode),
--- history_prev / history_next (prompt area), cancel, close.

---@class (exact) tether.PermissionConfig
---@field preview_diff boolean Show an edit's diff in a float while the permission question is open.

---@class (exact) tether.Icons
---@field pending string
---@field in_progress string
---@field completed string
---@field failed string
---@field rejected string
---@field waiting string

---@class (exact) tether.Config
---@field cmd string[] Command that starts the daemon (speaks LSP over stdio); `cmd[1]` is looked up on PATH.
---@field cmd_env? table<string, string> Extra environment for the daemon.
---@field model? string "anthropic:claude-sonnet-4-6", "openai:<model>@<base-url>", …; nil: the daemon's settings.
---@field permission_mode? tether.Mode Mode new sessions start in. Nil: the daemon's settings decide.
---@field init_options table<string, any> Extra initializationOptions for the daemon.
---@field root_markers string[] Files or folders that mark a workspace root (one daemon client per root).
---@field save_after_edit boolean Write buffers after an agent edit (`saveDocuments`); off: the daemon writes the file.
---@field forward_diagnostics boolean Send diagnostics of buffers the agent edited back to it.
---@field chat tether.ChatConfig
---@field permissions tether.PermissionConfig
---@field icons tether.Icons

---@class (partial) tether.Options: tether.Config

local M = {}

---@type tether.Config
M.defaults = {
  cmd = { "tether", "serve" },
  cmd_env = nil,
  model = nil,
  permission_mode = nil,
  init_options = {},
  root_markers = { ".git", ".tether", ".hg" },
  save_after_edit = true,
  forward_diagnostics = true,
  chat = {
    position = "right",
    size = 0.4,
    follow = true,
    max_tool_lines = 30,
    input_height = 4,
    keymaps = {
      prompt = "<CR>",
      send = "<CR>",
      send_insert = "<C-s>",
      history_prev = "<Up>",
      history_next = "<Down>",
      cancel = "<C-c>",
      close = "q",
    },
  },
  permissions = { preview_diff = true },
  icons = { pending = "○", in_progress = "◐", completed = "✓", failed = "✗", rejected = "⊘", waiting = "?" },
}

M.modes = { "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk" }

---@type tether.Config
M.options = vim.deepcopy(M.defaults)

--- Expected types of the options whose type is not obvious from the default.
local optional = {
  cmd_env = "table",
  model = "string",
  permission_mode = "string",
}

---@param path string
---@param value any
---@param default any
---@return boolean
local function valid(path, value, default)
  local want = default ~= nil and type(default) or optional[path]
  if want and type(value) ~= want then
    require("tether.log").warn(
      ("option %s should be a %s, got %s; using the default"):format(path, want, type(value))
    )
    return false
  end
  return true
end

--- Deep-merge `user` over `base`, dropping (with a warning) values of the wrong type.
---@param base table
---@param user table
---@param prefix string
---@return table
local function merge(base, user, prefix)
  local out = vim.deepcopy(base)
  for key, value in pairs(user) do
    local path = prefix .. key
    local default = base[key]
    if valid(path, value, default) then
      if type(value) == "table" and type(default) == "table" and not vim.islist(default) then
        out[key] = merge(default, value, path .. ".")
      else
        out[key] = value
      end
    end
  end
  return out
end

---@param opts? tether.Options
---@return tether.Config
function M.setup(opts)
  local merged = merge(M.defaults, opts or {}, "")
  if merged.permission_mode and not vim.tbl_contains(M.modes, merged.permission_mode) then
    require("tether.log").warn("unknown permission_mode " .. tostring(merged.permission_mode))
    merged.permission_mode = nil
  end
  M.options = merged --[[@as tether.Config]]
  return M.options
end

return M
