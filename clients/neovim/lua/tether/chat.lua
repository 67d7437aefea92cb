--- The chat of a session (a view): a Markdown transcript buffer the conversation items are
--- drawn into, a prompt area to write in (`input.lua`) and the todo list (`layout.lua` shows
--- the three). It subscribes to its session and redraws only the items an action changed.
--- Nothing here moves the cursor of the window the user is working in.

local blocks = require("tether.blocks")
local cards = require("tether.cards")
local config = require("tether.config")
local scratch = require("tether.scratch")

local M = {}

M.ns = vim.api.nvim_create_namespace("tether.chat")

--- Highlight groups the chat defines (`default`: a colorscheme or the user may set them).
--- TetherRewound carries its own terminal colour: Neovim's default Comment has none
--- without 'termguicolors', and a rewound turn must look dimmed everywhere.
local function define_highlights()
  local comment = vim.api.nvim_get_hl(0, { name = "Comment", link = false })
  vim.api.nvim_set_hl(0, "TetherRewound", {
    default = true,
    fg = comment.fg,
    ctermfg = comment.ctermfg or 8,
    italic = true,
    cterm = { italic = true },
  })
  for name, link in pairs({
    TetherWaiting = "WarningMsg",
    TetherRejected = "DiagnosticWarn",
    TetherPlanDone = "Comment",
  }) do
    vim.api.nvim_set_hl(0, name, { link = link, default = true })
  end
end
define_highlights()
vim.api.nvim_create_autocmd("ColorScheme", {
  group = vim.api.nvim_create_augroup("tether.highlights", { clear = true }),
  callback = define_highlights,
})

---@class tether.ChatView
---@field session tether.Session
---@field buf integer
---@field plan_buf integer The todo list, shown above the prompt area while it matters.
---@field text tether.Blocks
---@field drawn table<string, {rev: integer, len?: integer}> What each item looked like when drawn.
---@field dimmed table<string, integer> Extmarks dimming rewound items.
---@field input tether.Input The prompt area.
local Chat = {}
Chat.__index = Chat

--- Views by session id.
---@type table<string, tether.ChatView>
M.views = {}

--- The chat of session `s`, if it has one.
---@param s tether.Session
---@return tether.ChatView?
function M.of(s)
  return M.views[s.id]
end

--- Create the chat of `s` and subscribe it. `on_wipe` runs when the user wipes the chat
--- buffer (the session is then let go).
---@param s tether.Session
---@param on_wipe fun()
---@return tether.ChatView
function M.attach(s, on_wipe)
  local buf = scratch.buffer(s, "chat", ("tether://chat/%s"):format(s.id:sub(1, 8)))
  vim.bo[buf].undolevels = -1
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "markdown"
  require("tether.markdown").attach(buf)
  local plan_buf = scratch.buffer(s, "plan", ("tether://todo/%s"):format(s.id:sub(1, 8)))
  vim.bo[plan_buf].modifiable = false
  local self = setmetatable({
    session = s,
    buf = buf,
    plan_buf = plan_buf,
    text = blocks.new(buf),
    drawn = {},
    dimmed = {},
  }, Chat)
  self.input = require("tether.input").new(s)
  M.views[s.id] = self
  require("tether.questions").attach(self)
  self:_keymaps()
  s:subscribe(function(_, event)
    self:_on_event(event)
  end)
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      if M.views[s.id] == self then
        vim.schedule(on_wipe)
      end
    end,
  })
  self:redraw(vim.tbl_map(function(item)
    return item.key
  end, s.state.items))
  return self
end

function Chat:_keymaps()
  local keys = config.options.chat.keymaps
  local function map(name, fn, desc)
    if keys[name] then
      vim.keymap.set("n", keys[name], fn, { buffer = self.buf, desc = "Tether: " .. desc, nowait = true })
    end
  end
  map("prompt", function()
    self:show(true)
  end, "go to the prompt area")
  map("cancel", function()
    self.session:cancel()
  end, "cancel the turn")
  map("close", function()
    self:hide()
  end, "close the chat")
end

---@param event tether.SessionEvent
function Chat:_on_event(event)
  if event.type == "released" then
    return self:_wipe()
  end
  local keys = event.changed
  local t = event.action.type
  if t == "question" or t == "answered" or t == "withdrawn" then
    -- The card of the tool call a question is about says whether it waits.
    local item = self.session.state.index["q:" .. (event.action.id or event.action.question.id)]
    if item then
      keys = vim.list_extend({ "t:" .. item.question.toolCallId }, keys)
    end
  end
  self:redraw(keys)
  self:refresh_status()
  require("tether.questions").on_change(self, event.action)
end

function Chat:_wipe()
  M.views[self.session.id] = nil
  for _, buf in ipairs({ self.plan_buf, self.input.buf, self.buf }) do
    if vim.api.nvim_buf_is_valid(buf) then
      for _, win in ipairs(vim.fn.win_findbuf(buf)) do
        if #vim.api.nvim_list_wins() > 1 then
          pcall(vim.api.nvim_win_close, win, true)
        end
      end
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
end

---@return tether.CardOptions
function Chat:_card_options()
  local waiting = {}
  for _, q in ipairs(require("tether.state").open_questions(self.session.state)) do
    waiting[q.toolCallId] = true
  end
  return {
    root = self.session.root,
    icons = config.options.icons,
    max_tool_lines = config.options.chat.max_tool_lines,
    keys = vim.tbl_map(function(lhs) -- as pressed: `<LocalLeader>a` reads `\a`
      return lhs and config.key_label(lhs)
    end, config.options.questions.keymaps),
    waiting = waiting,
  }
end

--- Draw the items `keys` as they are now: new ones at the end, changed ones in place, and
--- streamed text of the last one appended. Windows following the end keep following it.
---@param keys string[]
function Chat:redraw(keys)
  if #keys == 0 or not vim.api.nvim_buf_is_valid(self.buf) then
    return
  end
  local index = self.session.state.index
  local opts = self:_card_options()
  self:_follow(function()
    for _, key in ipairs(keys) do
      local item = index[key]
      local drawn = self.drawn[key]
      if item and (not drawn or drawn.rev ~= item.rev) then
        self:_draw(item, drawn, opts)
      end
    end
  end)
end

---@param item tether.Item
---@param drawn? {rev: integer, len?: integer}
---@param opts tether.CardOptions
function Chat:_draw(item, drawn, opts)
  local range = self.text:range_of(item.key)
  local text = item.text or ""
  local is_last = range and range.pos == #self.text.order
  if
    drawn
    and drawn.len
    and is_last
    and (item.kind == "agent" or item.kind == "thought")
    and not item.rewound
    and #text > drawn.len
  then
    self.text:stream(item.key, text:sub(drawn.len + 1))
  else
    self.text:put(item.key, cards.card(item, opts))
  end
  self.drawn[item.key] = { rev = item.rev, len = (item.kind == "agent" or item.kind == "thought") and #text or nil }
  self:_dim(item)
end

--- Rewound items stay readable, dimmed.
---@param item tether.Item
function Chat:_dim(item)
  local range = self.text:range_of(item.key)
  if not item.rewound or not range then
    return
  end
  local last = range.row + range.size - 1
  self.dimmed[item.key] = vim.api.nvim_buf_set_extmark(self.buf, M.ns, range.row, 0, {
    id = self.dimmed[item.key],
    end_row = last,
    end_col = #(vim.api.nvim_buf_get_lines(self.buf, last, last + 1, false)[1] or ""),
    hl_group = "TetherRewound",
    hl_eol = true,
    priority = 250,
  })
end

---@return integer[]
function Chat:windows()
  return vim.api.nvim_buf_is_valid(self.buf) and vim.fn.win_findbuf(self.buf) or {}
end

--- Apply `fn` (which changes the buffer) and keep following windows at the end: a window
--- whose cursor was on the last line moves to the new last line. Other windows are left alone.
---@param fn fun()
function Chat:_follow(fn)
  local before = self.text:line_count()
  local follow = {}
  if config.options.chat.follow then
    for _, win in ipairs(self:windows()) do
      if vim.api.nvim_win_get_cursor(win)[1] >= before then
        follow[#follow + 1] = win
      end
    end
  end
  fn()
  local last = self.text:line_count()
  for _, win in ipairs(follow) do
    vim.api.nvim_win_set_cursor(win, { last, 0 })
  end
end

--- Show the chat (and its prompt area); `enter` moves the cursor into the prompt area.
---@param enter? boolean
function Chat:show(enter)
  require("tether.layout").show(self, enter)
end

function Chat:hide()
  require("tether.layout").hide(self)
end

--- The winbar and the todo list window.
function Chat:refresh_status()
  require("tether.layout").refresh(self)
end

--- The item whose lines hold the cursor of the chat window `win`.
---@param win integer
---@return tether.Item?
function Chat:item_at_cursor(win)
  local row = vim.api.nvim_win_get_cursor(win)[1] - 1
  local range = self.text:block_at(row)
  return range and self.session.state.index[range.key] or nil
end

--- All text in the chat.
---@return string
function Chat:contents()
  return table.concat(vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n")
end

return M
