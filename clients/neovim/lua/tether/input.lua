--- The prompt area below the chat: a small buffer to write multi-line prompts in, as in
--- CodeCompanion or CopilotChat. `<CR>` (normal mode) or `<C-s>` (insert mode) sends it
--- whole; `<Up>`/`<Down>` on its first/last line walk the prompts sent before from this
--- workspace (kept across Neovim runs, `history.lua`); `@path` attaches a workspace file and
--- `#buffer` an open buffer (completed by the omnifunc, and typing `@` or `#` opens the
--- completion without inserting anything). While "Keep planning" waits for what should
--- change, what is sent here is that answer.

local config = require("tether.config")
local history = require("tether.history")
local scratch = require("tether.scratch")

local M = {}

---@class tether.Input
---@field session tether.Session
---@field buf integer
---@field pos? integer Index in the history while walking it.
---@field draft? string[] What was typed before walking the history.
local Input = {}
Input.__index = Input

M.HINT = "%#Comment#<CR> send · <C-s> from insert · <Up> history · @file #buffer"
M.FEEDBACK_HINT = "%#WarningMsg#What should change in the plan? <CR> sends it (empty: no note)"

---@param s tether.Session
---@return tether.Input
function M.new(s)
  local buf = scratch.buffer(s, "input", ("tether://prompt/%s"):format(s.id:sub(1, 8)))
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].omnifunc = "v:lua.require'tether.mentions'.omnifunc"
  -- Completion opens by itself after `@`: it must not insert a match the user did not pick
  -- (the default 'completeopt' inserts the first one), and narrows as they type.
  vim.bo[buf].completeopt = "menuone,noinsert,noselect,fuzzy,popup"
  local self = setmetatable({ session = s, buf = buf }, Input)
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

--- The plan question waiting for what should change, if any.
---@return tether.QuestionState?
function Input:feedback_question()
  for _, q in ipairs(require("tether.state").open_questions(self.session.state)) do
    if q.wants_feedback then
      return q
    end
  end
end

--- Send what is written (every line of it), remember it, and empty the area.
function Input:send()
  local text = vim.trim(table.concat(self:lines(), "\n"))
  local q = self:feedback_question()
  if q then
    self:set_lines({ "" })
    self.session:answer(q.id, "plan_keep", text)
    return
  end
  if text == "" then
    return require("tether.log").info("the prompt is empty")
  end
  history.add(self.session.root, text)
  self.pos, self.draft = nil, nil
  self:set_lines({ "" })
  local content = require("tether.mentions").resolve(text, self.session)
  content[#content + 1] = { type = "text", text = text }
  self.session:prompt(content)
end

--- Step through the history: -1 older, +1 newer (past the newest: the draft again).
---@param step integer
function Input:walk(step)
  local list = history.list(self.session.root)
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
    self.session:cancel()
  end, "cancel the turn")
end

return M
