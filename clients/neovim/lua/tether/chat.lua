--- The chat of a session: a Markdown transcript buffer that updates stream into, a prompt
--- area to write in (`input.lua`) and the todo list (`layout.lua` shows the three). Nothing
--- here moves the cursor of the window the user is working in.

local blocks = require("tether.blocks")
local config = require("tether.config")
local render = require("tether.render")

local M = {}

M.ns = vim.api.nvim_create_namespace("tether.chat")

local STATUS_HL = {
  pending = "DiagnosticHint",
  in_progress = "DiagnosticWarn",
  completed = "DiagnosticOk",
  failed = "DiagnosticError",
}

for name, link in pairs({
  TetherRewound = "Comment",
  TetherWaiting = "WarningMsg",
  TetherRejected = "DiagnosticWarn",
  TetherPlanDone = "Comment",
}) do
  vim.api.nvim_set_hl(0, name, { link = link, default = true })
end

---@class tether.Chat
---@field session tether.Session
---@field buf integer
---@field text tether.Blocks
---@field tools table<string, tether.ToolState>
---@field input tether.Input The prompt area.
---@field plan_buf integer The todo list, shown above the prompt area while it matters.
---@field agent_open boolean The "## Tether" header of the current reply is written.
---@field thought? {key: string, text: string} The thinking block being streamed.
---@field thoughts integer
---@field turn_marks table<string, integer> Extmark on the "## You" line of each turn, by turnId.
local Chat = {}
Chat.__index = Chat

---@param buf integer
---@param session tether.Session
---@param role "chat"|"input"|"plan"
function M.scratch(buf, session, role)
  local bo = vim.bo[buf]
  bo.buftype = "nofile"
  bo.bufhidden = "hide"
  bo.swapfile = false
  vim.b[buf].tether_root = session.root
  vim.b[buf].tether_session = session.id
  vim.b[buf].tether_role = role
end

---@param session tether.Session
---@return tether.Chat
function M.new(session)
  local buf = vim.api.nvim_create_buf(false, true)
  local name = ("tether://chat/%s"):format(session.id:sub(1, 8))
  -- A chat of the same session from a daemon that exited may still hold the name.
  if not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, name .. "-" .. buf)
  end
  M.scratch(buf, session, "chat")
  vim.bo[buf].undolevels = -1
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "markdown"
  require("tether.markdown").attach(buf)
  local plan_buf = vim.api.nvim_create_buf(false, true)
  M.scratch(plan_buf, session, "plan")
  vim.bo[plan_buf].modifiable = false
  local self = setmetatable({
    session = session,
    buf = buf,
    plan_buf = plan_buf,
    text = blocks.new(buf),
    tools = {},
    agent_open = false,
    thoughts = 0,
    turn_marks = {},
  }, Chat)
  self.input = require("tether.input").new(session)
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
    if not require("tether.permission").reopen_at_cursor(self) then
      self:show(true)
    end
  end, "Tether: answer the question here, else go to the prompt area")
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

--- Show the chat (and its prompt area); `enter` moves the cursor into the prompt area.
---@param enter? boolean
function Chat:show(enter)
  require("tether.layout").show(self, enter)
end

function Chat:hide()
  require("tether.layout").hide(self)
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
  if self.text:last_line() ~= "" and not self.text:empty() then
    table.insert(lines, 1, "")
  end
  return lines
end

---@param key string
---@param tool tether.ToolState
function Chat:_put_tool(key, tool)
  local icons = config.options.icons
  local body = render.tool_body(tool, config.options.chat.max_tool_lines)
  local hl = STATUS_HL[tool.status]
  if tool.waiting then
    hl = "TetherWaiting"
  elseif tool.rejected then
    hl = "TetherRejected"
  end
  local open = tool.rawInput and type(tool.rawInput.plan) == "string"
  self.text:put(key, render.tool_header(icons, tool, self.session.root), body, hl, open)
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

---@param content tether.ContentBlock[]
---@param turn_id? string
function Chat:_user_message(content, turn_id)
  self.agent_open = false
  local lines = render.user_message(content, self.session.root)
  local n = #lines
  self.text:append(self:_spaced(lines))
  if turn_id and turn_id ~= "" then
    local row = self.text:line_count() - n
    self.turn_marks[turn_id] = vim.api.nvim_buf_set_extmark(self.buf, M.ns, row, 0, {})
  end
end

--- Render one session update (live, or from a loaded session's history).
---@param update tether.SessionUpdate
---@param turn_id? string
function Chat:apply(update, turn_id)
  local kind = update.kind
  if kind ~= "agent_thought_chunk" then
    self.thought = nil
  end
  self:_change(function()
    if kind == "user_message" then
      self:_user_message(update.content --[[@as tether.ContentBlock[] ]], turn_id or update.turnId)
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
      -- The question may come before the call it is about.
      for _, q in ipairs(self.session.questions or {}) do
        if q.tool_call_id == update.toolCallId then
          tool.waiting = true
        end
      end
      self.tools[update.toolCallId] = tool
      self:_put_tool(update.toolCallId, tool)
    elseif kind == "tool_call_update" then
      local tool = self.tools[update.toolCallId]
      if tool then
        tool.status = update.status or tool.status
        tool.title = update.title or tool.title
        tool.content = update.content or tool.content
        tool.rejected = update.rejected or tool.rejected
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
  self:refresh_status()
end

--- A permission question about `tool_call_id` is open (or not any more): its card says so.
---@param tool_call_id string
---@param waiting boolean
function Chat:set_waiting(tool_call_id, waiting)
  local tool = self.tools[tool_call_id]
  if tool then
    tool.waiting = waiting or nil
    self:_put_tool(tool_call_id, tool)
  end
  self:refresh_status()
end

--- The tool call whose block holds the cursor of the chat window `win`.
---@param win integer
---@return string?
function Chat:tool_at_cursor(win)
  local row = vim.api.nvim_win_get_cursor(win)[1] - 1
  local range = self.text:block_at(row)
  return range and self.tools[range.key] and range.key or nil
end

--- Dim the turns from `turn_id` on (they were rewound) and label the first of them.
---@param turn_id string
---@return boolean marked
function Chat:mark_rewound(turn_id)
  local mark = self.turn_marks[turn_id]
  if not mark then
    return false
  end
  local row = vim.api.nvim_buf_get_extmark_by_id(self.buf, M.ns, mark, {})[1]
  if not row then
    return false
  end
  local last = self.text:line_count() - 1
  vim.api.nvim_buf_set_extmark(self.buf, M.ns, row, 0, {
    end_row = last,
    end_col = #(vim.api.nvim_buf_get_lines(self.buf, last, last + 1, false)[1] or ""),
    hl_group = "TetherRewound",
    hl_eol = true,
    priority = 250,
  })
  vim.api.nvim_buf_set_extmark(self.buf, M.ns, row, 0, {
    virt_text = { { "⤺ rewound: files and conversation went back to before this turn", "TetherRewound" } },
    virt_text_pos = "eol",
  })
  return true
end

--- Turn ids marked as rewound (for tests and `:TetherRewind`'s list).
---@return string[]
function Chat:rewound_turns()
  local out = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(self.buf, M.ns, 0, -1, { details = true })) do
    if mark[4].virt_text then
      for id, turn_mark in pairs(self.turn_marks) do
        local pos = vim.api.nvim_buf_get_extmark_by_id(self.buf, M.ns, turn_mark, {})
        if pos[1] == mark[2] then
          out[#out + 1] = id
        end
      end
    end
  end
  return out
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

--- The winbar (mode, question, work, todo list, usage) and the todo list window.
function Chat:refresh_status()
  require("tether.layout").refresh(self)
end

--- All text in the chat.
---@return string
function Chat:contents()
  return table.concat(vim.api.nvim_buf_get_lines(self.buf, 0, -1, false), "\n")
end

return M
