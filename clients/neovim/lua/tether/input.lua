--- The prompt area below the chat: a small buffer to write multi-line prompts in, as in
--- CodeCompanion or CopilotChat. `<CR>` (normal mode) or `<C-s>` (insert mode) sends it
--- whole; `<Up>`/`<Down>` on its first/last line walk the prompts sent before; `@path`
--- attaches a workspace file and `#buffer` an open buffer (completed by the omnifunc, and
--- typing `@` or `#` opens the completion).

local config = require("tether.config")

local M = {}

--- Prompts sent, oldest first, per workspace root (shared by its sessions).
---@type table<string, string[]>
M.history = {}

---@class tether.Input
---@field session tether.Session
---@field buf integer
---@field pos? integer Index in the history while walking it.
---@field draft? string[] What was typed before walking the history.
local Input = {}
Input.__index = Input

M.HINT = "%#Comment#<CR> send · <C-s> from insert · <Up> history · @file #buffer"

---@param session tether.Session
---@return tether.Input
function M.new(session)
  local buf = vim.api.nvim_create_buf(false, true)
  require("tether.chat").scratch(buf, session, "input")
  pcall(vim.api.nvim_buf_set_name, buf, ("tether://prompt/%s"):format(session.id:sub(1, 8)))
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].omnifunc = "v:lua.require'tether.mentions'.omnifunc"
  local self = setmetatable({ session = session, buf = buf }, Input)
  self:_keymaps()
  vim.api.nvim_create_autocmd("InsertCharPre", {
    buffer = buf,
    callback = function()
      require("tether.mentions").maybe_complete(vim.v.char)
    end,
  })
  return self
end

---@return string[]
function Input:lines()
  return vim.api.nvim_buf_get_lines(self.buf, 0, -1, false)
end

---@param lines string[]
function Input:set_lines(lines)
  vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
  for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
    local last = #lines
    vim.api.nvim_win_set_cursor(win, { last, #(lines[last] or "") })
  end
end

--- Send what is written (every line of it), remember it, and empty the area.
function Input:send()
  local text = vim.trim(table.concat(self:lines(), "\n"))
  if text == "" then
    return require("tether.log").info("the prompt is empty")
  end
  local root = self.session.root
  M.history[root] = M.history[root] or {}
  table.insert(M.history[root], text)
  self.pos, self.draft = nil, nil
  self:set_lines({ "" })
  local links = require("tether.mentions").resolve(text, self.session)
  require("tether.session").prompt(self.session, text, nil, links)
end

--- Step through the history: -1 older, +1 newer (past the newest: the draft again).
---@param step integer
function Input:walk(step)
  local list = M.history[self.session.root] or {}
  if #list == 0 then
    return
  end
  if not self.pos then
    if step > 0 then
      return
    end
    self.draft = self:lines()
    self.pos = #list + 1
  end
  self.pos = math.max(1, self.pos + step)
  if self.pos > #list then
    self.pos = nil
    self:set_lines(self.draft or { "" })
    return
  end
  self:set_lines(vim.split(list[self.pos], "\n", { plain = true }))
end

function Input:_keymaps()
  local keys = config.options.chat.keymaps
  local buf = self.buf
  local function map(mode, name, fn, desc)
    if keys[name] then
      vim.keymap.set(mode, keys[name], fn, { buffer = buf, desc = "Tether: " .. desc })
    end
  end
  map("n", "send", function()
    self:send()
  end, "send the prompt")
  map("i", "send_insert", function()
    vim.cmd.stopinsert()
    self:send()
  end, "send the prompt")
  --- History keys act on the first/last line only; elsewhere they move as usual.
  local function edge(name, step, at_edge)
    for _, mode in ipairs({ "n", "i" }) do
      map(mode, name, function()
        if vim.fn.pumvisible() == 1 or not at_edge() then
          local key = vim.keycode(keys[name] --[[@as string]])
          return vim.api.nvim_feedkeys(key, "n", false)
        end
        self:walk(step)
      end, step < 0 and "older prompt" or "newer prompt")
    end
  end
  edge("history_prev", -1, function()
    return vim.fn.line(".") == 1
  end)
  edge("history_next", 1, function()
    return vim.fn.line(".") == vim.fn.line("$")
  end)
  map("n", "cancel", function()
    require("tether.session").cancel(self.session)
  end, "cancel the turn")
end

return M
