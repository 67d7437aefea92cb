--- The windows of a chat: the transcript in a split, the todo list below it while it
--- matters (a real window, so it never hides text and never scrolls out of sight), and the
--- prompt area at the bottom. The transcript's winbar carries the status (`status.lua`).
---
--- Windows are found by their buffers, which know their workspace and role (`b:tether_root`,
--- `b:tether_role`): a new session of the same workspace takes over the windows of the last.

local config = require("tether.config")
local render = require("tether.render")
local status = require("tether.status")

local M = {}

local augroup = nil ---@type integer?
local PLAN_MAX_HEIGHT = 8
local ns = vim.api.nvim_create_namespace("tether.todo")

--- Chats that were shown, by transcript buffer (for resizes); a wiped chat leaves.
---@type table<integer, tether.ChatView>
local shown = {}

---@param win integer
local function transcript_options(win)
  local wo = vim.wo[win][0]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'tether.blocks'.foldexpr()"
  wo.foldtext = "v:lua.require'tether.blocks'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
  wo.conceallevel = 2
  wo.concealcursor = "n"
  wo.winfixwidth = true
end

---@param win integer
local function small_options(win)
  local wo = vim.wo[win][0]
  wo.wrap = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldenable = false
  wo.winfixheight = true
  wo.winfixwidth = true
end

--- A window of this workspace showing a Tether buffer of `role` (another session's, maybe).
---@param root string
---@param role string
---@return integer?
local function window_of(root, role)
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.b[buf].tether_role == role and vim.b[buf].tether_root == root then
      return win
    end
  end
end

---@param chat tether.ChatView
---@param role "chat"|"input"|"plan"
---@return integer
local function buf_of(chat, role)
  return role == "chat" and chat.buf or role == "input" and chat.input.buf or chat.plan_buf
end

--- The window showing `role` for `chat`, taking over one of another session of the same
--- workspace if needed.
---@param chat tether.ChatView
---@param role "chat"|"input"|"plan"
---@return integer?
function M.window(chat, role)
  local buf = buf_of(chat, role)
  local win = vim.fn.win_findbuf(buf)[1]
  if win then
    return win
  end
  win = window_of(chat.session.root, role)
  if win then
    vim.api.nvim_win_set_buf(win, buf)
  end
  return win
end

local function watch()
  if augroup then
    return
  end
  augroup = vim.api.nvim_create_augroup("tether.layout", { clear = true })
  -- Only the chats on screen: every window resize must not cost a walk of all sessions.
  vim.api.nvim_create_autocmd("WinResized", {
    group = augroup,
    callback = function()
      local done = {}
      for _, win in ipairs(vim.v.event.windows or {}) do
        local buf = vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win)
        local chat = buf and shown[buf]
        if chat and not done[chat] then
          done[chat] = true
          M.refresh(chat)
        end
      end
    end,
  })
  -- Closing the transcript closes its prompt area and todo list with it.
  vim.api.nvim_create_autocmd("WinClosed", {
    group = augroup,
    callback = function(ev)
      local win = tonumber(ev.match) --[[@as integer]]
      if not vim.api.nvim_win_is_valid(win) then
        return
      end
      local buf = vim.api.nvim_win_get_buf(win)
      if vim.b[buf].tether_role ~= "chat" or #vim.fn.win_findbuf(buf) > 1 then
        return
      end
      local root = vim.b[buf].tether_root
      vim.schedule(function()
        for _, role in ipairs({ "plan", "input" }) do
          local other = window_of(root, role)
          if other and not window_of(root, "chat") and #vim.api.nvim_list_wins() > 1 then
            pcall(vim.api.nvim_win_close, other, false)
          end
        end
      end)
    end,
  })
end

---@param chat tether.ChatView
---@param enter? boolean Move the cursor into the prompt area.
function M.show(chat, enter)
  watch()
  if not shown[chat.buf] then
    shown[chat.buf] = chat
    vim.api.nvim_create_autocmd("BufWipeout", {
      buffer = chat.buf,
      once = true,
      callback = function(ev)
        shown[ev.buf] = nil
      end,
    })
  end
  local opts = config.options.chat
  local win = M.window(chat, "chat")
  if not win then
    local vertical = opts.position == "left" or opts.position == "right"
    local total = vertical and vim.o.columns or vim.o.lines
    local size = opts.size < 1 and math.floor(total * opts.size) or math.floor(opts.size)
    win = vim.api.nvim_open_win(chat.buf, false, {
      split = opts.position,
      win = -1,
      width = vertical and size or nil,
      height = (not vertical) and size or nil,
    })
  end
  transcript_options(win)
  vim.api.nvim_win_set_cursor(win, { chat.text:line_count(), 0 })
  local input = M.window(chat, "input")
  if not input then
    input = vim.api.nvim_open_win(chat.input.buf, false, { split = "below", win = win, height = opts.input_height })
  end
  small_options(input)
  M.refresh(chat)
  if enter then
    vim.api.nvim_set_current_win(input)
  end
end

---@param chat tether.ChatView
function M.hide(chat)
  for _, buf in ipairs({ chat.plan_buf, chat.input.buf, chat.buf }) do
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      if #vim.api.nvim_list_wins() > 1 then
        vim.api.nvim_win_close(win, false)
      end
    end
  end
end

--- The todo list window: open with the list while it matters, closed otherwise.
---@param chat tether.ChatView
local function refresh_plan(chat)
  local s = chat.session.state
  local win = vim.fn.win_findbuf(chat.plan_buf)[1]
  if not status.plan_active(s) then
    if win and #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, false)
    end
    return
  end
  local lines = render.plan_lines(s.plan)
  local buf = chat.plan_buf
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for i, entry in ipairs(s.plan) do
    if entry.status == "completed" then
      vim.hl.range(buf, ns, "TetherPlanDone", { i - 1, 0 }, { i - 1, -1 })
    end
  end
  local height = math.min(#lines, PLAN_MAX_HEIGHT)
  if not win then
    local input = vim.fn.win_findbuf(chat.input.buf)[1]
    local chat_win = chat:windows()[1]
    if not (input or chat_win) then
      return
    end
    win = vim.api.nvim_open_win(buf, false, input and { split = "above", win = input, height = height }
      or { split = "below", win = chat_win, height = height })
    small_options(win)
  else
    vim.api.nvim_win_set_height(win, height)
  end
  vim.wo[win].statusline = ("%%#StatusLine# Todo list  %s"):format(render.plan_summary(s.plan):gsub("%%", "%%%%"))
end

--- Winbars of the chat's windows and the prompt area, and the todo list window.
---@param chat tether.ChatView
function M.refresh(chat)
  local icons = config.options.icons
  for _, win in ipairs(chat:windows()) do
    vim.wo[win].winbar = status.winbar(chat.session.state, icons, vim.api.nvim_win_get_width(win))
  end
  local hint = chat.input:feedback_question() and require("tether.input").FEEDBACK_HINT
    or require("tether.input").HINT
  for _, win in ipairs(vim.fn.win_findbuf(chat.input.buf)) do
    vim.wo[win].winbar = hint
  end
  if #chat:windows() > 0 then
    refresh_plan(chat)
  end
end

return M
