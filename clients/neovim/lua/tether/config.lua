--- Options of `require("tether").setup()`: types, defaults, and the merge that validates them.
--- Like gitsigns, every problem is reported by `vim.notify` naming the option (with the
--- option meant, for a typo) and falls back to the default, so a mistake never leaves the
--- plugin dead and is never silently accepted.

---@alias tether.Mode "default"|"acceptEdits"|"plan"|"bypassPermissions"|"dontAsk"
---@alias tether.ChatPosition "right"|"left"|"above"|"below"

---@class (exact) tether.ChatConfig
---@field position tether.ChatPosition Where the chat split opens.
---@field size number Width (left/right) or height (above/below): columns/rows, or a fraction of the editor if < 1.
---@field follow boolean Keep the chat scrolled to the end while the agent streams (unless you moved its cursor up).
---@field max_tool_lines integer Lines of tool output kept per tool call block (the rest is elided).
---@field input_height integer Lines of the prompt area below the chat.
---@field keymaps table<string, string|false> Buffer-local keys (false disables one): prompt (chat: go to the
--- prompt area), send / send_insert (prompt area, normal / insert mode), history_prev / history_next (prompt
--- area), cancel, close.

---@class (exact) tether.QuestionsConfig
---@field keymaps table<string, string|false> Keys in the chat that answer a question (false disables one): allow,
--- allow_edits (a plan: start accepting edits), reject (a plan: keep planning), always_allow, always_reject
--- (pressed twice), select (a list of all answers).
---@field select boolean Also ask each question with `vim.ui.select` as soon as it arrives.
---@field guard_ms integer No key counts before a list has been on screen this long (0 to 5000 ms).
---@field notify boolean Say when a question arrives and no window shows the chat.
---@field preview boolean With a list: show an edit's diff in a float while it is open.

---@class (exact) tether.ReviewConfig
---@field signs table<"pending"|"kept", string> Sign-column text of a changed hunk, pending review or kept.
---@field keymaps table<string, string|false> Keys in buffers with changed hunks, and in the review list (false
--- disables one): next_hunk, prev_hunk, keep_hunk, undo_hunk, keep_file, undo_file.

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
---@field auto_install boolean Install the daemon (uv/pipx, from this repository) when it is missing.
---@field chat tether.ChatConfig
---@field questions tether.QuestionsConfig
---@field review tether.ReviewConfig
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
  auto_install = true,
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
  questions = {
    -- On <LocalLeader> (`\` unless set), which no built-in command uses: a default key must
    -- never shadow, or be a prefix of, a command or motion (`:help index`, Neovim's own
    -- default mappings such as `grn`).
    keymaps = {
      allow = "<LocalLeader>a",
      allow_edits = "<LocalLeader>e",
      reject = "<LocalLeader>r",
      always_allow = "<LocalLeader>A",
      always_reject = "<LocalLeader>R",
      select = "<LocalLeader>l",
    },
    select = false,
    guard_ms = 400,
    notify = true,
    preview = true,
  },
  review = {
    signs = { pending = "┃", kept = "┆" },
    keymaps = {
      next_hunk = "]h",
      prev_hunk = "[h",
      keep_hunk = "<LocalLeader>k",
      undo_hunk = "<LocalLeader>u",
      keep_file = "<LocalLeader>K",
      undo_file = "<LocalLeader>U",
    },
  },
  icons = { pending = "○", in_progress = "◐", completed = "✓", failed = "✗", rejected = "⊘", waiting = "?" },
}

M.modes = { "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk" }

--- Options whose value is one of a few words.
M.enums = {
  permission_mode = M.modes,
  ["chat.position"] = { "right", "left", "above", "below" },
}

--- Largest sensible value of a number option: past it is a mistake (a guard of minutes).
M.limits = { ["questions.guard_ms"] = 5000, ["chat.input_height"] = 50, ["chat.max_tool_lines"] = 10000 }

--- Options that are nil by default, and their type.
local optional = { cmd_env = "table", model = "string", permission_mode = "string" }

--- Tables whose keys are free (environment, initializationOptions).
local free = { cmd_env = true, init_options = true }

---@type tether.Config
M.options = vim.deepcopy(M.defaults)

--- A key as the user presses it: `<LocalLeader>a` reads `\a` (or the leader set).
---@param lhs string
---@return string
function M.key_label(lhs)
  return vim.fn.keytrans(vim.keycode(lhs))
end

---@param msg string
local function warn(msg)
  require("tether.log").warn(msg)
end

--- Edit distance, for "did you mean".
---@param a string
---@param b string
---@return integer
local function distance(a, b)
  local prev = {}
  for j = 0, #b do
    prev[j] = j
  end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev = cur
  end
  return prev[#b]
end

--- The closest of `words` to `word`, if close enough to be a typo.
---@param word string
---@param words string[]
---@return string?
function M.suggest(word, words)
  local best, best_d = nil, math.huge
  for _, w in ipairs(words) do
    local d = distance(word:lower(), w:lower())
    if d < best_d then
      best, best_d = w, d
    end
  end
  if best and best_d <= math.max(2, math.floor(#word / 3)) then
    return best
  end
end

---@param path string
---@param value any
---@return boolean
local function valid_value(path, value)
  local enum = M.enums[path]
  if enum and not vim.tbl_contains(enum, value) then
    local hint = type(value) == "string" and M.suggest(value, enum)
    warn(("option %s must be one of %s, not %s%s; using the default"):format(
      path,
      table.concat(enum, ", "),
      vim.inspect(value),
      hint and (" (did you mean %q?)"):format(hint) or ""
    ))
    return false
  end
  if type(value) == "number" then
    local min = ({ ["chat.size"] = 0, ["questions.guard_ms"] = -1 })[path] or 0
    if value <= min then
      warn(("option %s must be greater than %d, not %s; using the default"):format(path, math.max(min, 0), value))
      return false
    end
    local max = M.limits[path]
    if max and value > max then
      warn(("option %s must be at most %d, not %s; using the default"):format(path, max, value))
      return false
    end
  end
  if path:match("keymaps%.") and value ~= false and (type(value) ~= "string" or vim.trim(value) == "") then
    warn(("option %s must be a key (a non-empty string) or false; using the default"):format(path))
    return false
  end
  if path:match("^review%.signs%.") and type(value) == "string" then
    local cells = vim.fn.strdisplaywidth(value)
    if cells < 1 or cells > 2 then
      warn(("option %s must be 1 or 2 cells wide (the sign column), not %q; using the default"):format(path, value))
      return false
    end
  end
  return true
end

--- Deep-merge `user` over `base`: unknown keys, wrong types and bad values are reported
--- and dropped.
---@param base table
---@param user table
---@param prefix string
---@return table
local function merge(base, user, prefix)
  local out = vim.deepcopy(base)
  local known = vim.tbl_keys(base)
  for key in pairs(optional) do
    if prefix == "" then
      known[#known + 1] = key
    end
  end
  for key, value in pairs(user) do
    local path = prefix .. tostring(key)
    local default = base[key]
    local want = default ~= nil and type(default) or (prefix == "" and optional[key])
    if not want and not vim.tbl_contains(known, key) then
      local hint = type(key) == "string" and M.suggest(key, known)
      warn(("unknown option %s%s; ignored"):format(path, hint and (" (did you mean %s%s?)"):format(prefix, hint) or ""))
    elseif want and type(value) ~= want and not (path:match("keymaps%.") and value == false) then
      warn(("option %s should be a %s, got %s; using the default"):format(path, want, type(value)))
    elseif valid_value(path, value) then
      if type(value) == "table" and type(default) == "table" and not vim.islist(default) and not free[path] then
        out[key] = merge(default, value, path .. ".")
      else
        out[key] = value
      end
    end
  end
  return out
end

--- `permissions.preview_diff` was the name of `questions.preview`.
---@param opts table
---@return table
local function migrate(opts)
  local old = nil
  if type(opts.permissions) == "table" then
    old = opts.permissions.preview_diff
  end
  if old ~= nil then
    opts = vim.deepcopy(opts)
    opts.questions = vim.tbl_extend("keep", opts.questions or {}, { preview = old })
  end
  return opts
end

--- `setup()` has run (with the user's options, or the defaults by `ensure`).
local configured = false

--- Commands and health checks call this: using Tether without `setup()` means the defaults.
function M.ensure()
  if not configured then
    M.setup({})
  end
end

---@param opts? tether.Options
---@return tether.Config
function M.setup(opts)
  configured = true
  opts = opts or {}
  if type(opts) ~= "table" then
    warn(("setup() takes a table of options, not a %s; using the defaults"):format(type(opts)))
    opts = {}
  end
  local user = migrate(opts)
  if user.permissions ~= nil then
    warn("option permissions is now questions (permissions.preview_diff: questions.preview)")
    user = vim.deepcopy(user)
    user.permissions = nil
  end
  M.options = merge(M.defaults, user, "") --[[@as tether.Config]]
  return M.options
end

return M
