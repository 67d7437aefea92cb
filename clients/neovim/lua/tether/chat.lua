--- The chat: a markdown scratch buffer per session, shown in a split. Updates stream into it
--- without ever moving the cursor of the window the user is working in; the plan is a footer
--- of virtual lines and the status (mode, plan, usage) is the chat window's winbar.

local blocks = require("tether.blocks")
local config = require("tether.config")
local render = require("tether.render")

local M = {}

local STATUS_HL = {
  pending = "DiagnosticHint",
  in_progress = "DiagnosticWarn",
  completed = "DiagnosticOk",
  failed = "DiagnosticError",
}

---@class tether.Chat
---@field session tether.Session
---@field buf integer
---@field text tether.Blocks
---@field tools table<string, tether.ToolState>
---@field agent_open boolean The "## Tether" header of the current reply is written.
---@field thought? {key: string, text: string} The thinking block being streamed.
---@field thoughts integer
---@field waiting? string Title of a tool waiting for a permission answer.
local Chat = {}
Chat.__index = Chat

---@param session tether.Session
---@return tether.Chat
function M.new(session)
  local buf = vim.api.nvim_create_buf(false, true)
  local name = ("tether://chat/%s"):format(session.id:sub(1, 8))
  -- A chat of the same session from a daemon that exited may still hold the name.
  if not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, name .. "-" .. buf)
  end
  local bo = vim.bo[buf]
  bo.buftype = "nofile"
  bo.bufhidden = "hide"
  bo.swapfile = false
  bo.undolevels = -1
  bo.modifiable = false
  bo.filetype = "markdown"
  vim.b[buf].tether_root = session.root
  vim.b[buf].tether_session = session.id
  local self = setmetatable({
    session = session,
    buf = buf,
    text = blocks.new(buf),
    tools = {},
    agent_open = false,
    thoughts = 0,
  }, Chat)
  self:_keymaps()
  return self
end

function Chat:_keymaps()
  local keys = config.options.chat.keymaps
  local function map(name, fn, desc)
    if keys[name] then
      vim.keymap.set("n", keys[name], fn, { buffer = self.buf, desc = desc, nowait = true })
    end
  end
  map("prompt", function()
    require("tether.session").ask_and_prompt(self.session)
  end, "Tether: send a prompt")
  map("cancel", function()
    require("tether.session").cancel(self.session)
  end, "Tether: cancel the turn")
  map("close", function()
    self:hide()
  end, "Tether: close the chat")
end

---@return integer[]
function Chat:windows()
  return vim.fn.win_findbuf(self.buf)
end

---@param win integer
local function set_window_options(win)
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
  wo.winfixwidth = true
end

--- A window showing another chat of the same workspace (an earlier session).
---@return integer?
function Chat:_sibling_window()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local buf = vim.api.nvim_win_get_buf(win)
    if buf ~= self.buf and vim.b[buf].tether_session and vim.b[buf].tether_root == self.session.root then
      return win
    end
  end
end

--- Show the chat: in the window of another chat of this workspace if there is one, else in a
--- new split. The cursor stays where it is unless `enter` asks for it.
---@param enter? boolean
function Chat:show(enter)
  local win = self:windows()[1]
  local sibling = not win and self:_sibling_window()
  if sibling then
    win = sibling
    vim.api.nvim_win_set_buf(win, self.buf)
    set_window_options(win)
    vim.api.nvim_win_set_cursor(win, { self.text:line_count(), 0 })
    self:refresh_status()
  elseif not win then
    local opts = config.options.chat
    local vertical = opts.position == "left" or opts.position == "right"
    local total = vertical and vim.o.columns or vim.o.lines
    local size = opts.size < 1 and math.floor(total * opts.size) or math.floor(opts.size)
    win = vim.api.nvim_open_win(self.buf, false, {
      split = opts.position,
      win = -1,
      width = vertical and size or nil,
      height = (not vertical) and size or nil,
    })
    set_window_options(win)
    vim.api.nvim_win_set_cursor(win, { self.text:line_count(), 0 })
    self:refresh_status()
  end
  if enter then
    vim.api.nvim_set_current_win(win)
  end
end

function Chat:hide()
  for _, win in ipairs(self:windows()) do
    if #vim.api.nvim_list_wins() > 1 then
      vim.api.nvim_win_close(win, false)
    end
  end
end

--- Apply `fn` (which changes the buffer) and keep following windows at the end: a window
--- whose cursor was on the last line moves to the new last line. Other windows are left alone.
---@param fn fun()
function Chat:_change(fn)
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

function Chat:_open_reply()
  if not self.agent_open then
    self.text:append(self:_spaced({ "## Tether" }))
    self.agent_open = true
  end
end

--- `lines` with a blank line above them unless the buffer already ends with one.
---@param lines string[]
---@return string[]
function Chat:_spaced(lines)
  if self.text:last_line() ~= "" then
    table.insert(lines, 1, "")
  end
  return lines
end

---@param tool tether.ToolState
---@param key string
function Chat:_put_tool(key, tool)
  local icons = config.options.icons
  local body = render.tool_body(tool, config.options.chat.max_tool_lines)
  self.text:put(key, render.tool_header(icons, tool), body, STATUS_HL[tool.status])
end

---@param text string
function Chat:_thought(text)
  if not self.thought then
    self.thoughts = self.thoughts + 1
    self.thought = { key = "thought:" .. self.thoughts, text = "" }
  end
  self.thought.text = self.thought.text .. text
  self.text:put(self.thought.key, "💭 Thinking", render.lines(self.thought.text), "Comment")
end

--- Render one session update (live, or from a loaded session's history).
---@param update tether.SessionUpdate
function Chat:apply(update)
  local kind = update.kind
  if kind ~= "agent_thought_chunk" then
    self.thought = nil
  end
  self:_change(function()
    if kind == "user_message" then
      self.agent_open = false
      local content = update.content --[[@as tether.ContentBlock[] ]]
      self.text:append(self:_spaced(render.user_message(content, self.session.root)))
    elseif kind == "agent_message_chunk" then
      self:_open_reply()
      self.text:stream(update.text or "")
    elseif kind == "agent_thought_chunk" then
      self:_open_reply()
      self:_thought(update.text or "")
    elseif kind == "tool_call" then
      self:_open_reply()
      local tool = {
        title = update.title or "tool",
        status = update.status or "pending",
        toolKind = update.toolKind,
        rawInput = update.rawInput,
      }
      self.tools[update.toolCallId] = tool
      self:_put_tool(update.toolCallId, tool)
    elseif kind == "tool_call_update" then
      local tool = self.tools[update.toolCallId]
      if tool then
        tool.status = update.status or tool.status
        tool.title = update.title or tool.title
        tool.content = update.content or tool.content
        self:_put_tool(update.toolCallId, tool)
      end
    elseif kind == "task" then
      self:note(("⚙ task %s: %s%s"):format(
        update.description or update.taskId,
        update.status,
        update.summary and (" — " .. update.summary) or ""
      ))
    elseif kind == "compaction" then
      self:note(("_Context compacted: %d → %d tokens._"):format(update.tokensBefore, update.tokensAfter))
    elseif kind == "notice" then
      self:note((update.level == "info" and "ℹ " or "⚠ ") .. (update.message or ""))
    elseif kind == "turn_end" then
      local line = render.stop_line(update.stopReason, update.error)
      if line then
        self:note(line)
      end
      self.agent_open = false
    end
  end)
  if kind == "plan" then
    self.text:set_footer(render.plan_footer(self.session.plan or {}))
  end
  self:refresh_status()
end

--- A line of its own in the chat (not part of the agent's prose).
---@param line string
function Chat:note(line)
  self:_change(function()
    local lines = self.text.tail == "none" and self.text:last_line() == "" and {} or { "" }
    vim.list_extend(lines, { line, "" })
    self.text:append(lines)
  end)
end

--- The winbar shows the mode, what the agent is doing, plan progress and usage.
function Chat:refresh_status()
  local line = render.status_line(self.session, self.waiting, config.options.icons):gsub("%%", "%%%%")
  for _, win in ipairs(self:windows()) do
    vim.wo[win].winbar = line
  end
end

---@param title? string
function Chat:set_waiting(title)
  self.waiting = title
  self:refresh_status()
end

--- All text in the chat.
---@return string
function Chat:contents()
  return table.concat(vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n")
end

return M
