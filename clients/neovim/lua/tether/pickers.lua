--- The pickers behind `:TetherSessions`, `:TetherRewind`, `:TetherMode` and `:TetherTasks`.
--- All of them go through `vim.ui.select`, so the user's picker of choice shows them.

local client = require("tether.client")
local config = require("tether.config")
local log = require("tether.log")
local session = require("tether.session")

local M = {}

---@param iso string
---@return string
local function when(iso)
  return (iso or ""):gsub("T", " "):gsub("%.%d+", ""):gsub("Z$", ""):sub(1, 16)
end

---@param info tether.SessionInfo
---@return string
function M.session_label(info)
  return ("%s  ·  %d turn%s  ·  %s"):format(
    info.title or "(untitled)",
    info.turns or 0,
    info.turns == 1 and "" or "s",
    when(info.updatedAt)
  )
end

--- Pick one of the workspace's sessions (newest first) and resume it.
---@param root string
---@param on_done? fun(s: tether.Session)
function M.sessions(root, on_done)
  client.with_client(root, function(c)
    if not c then
      return
    end
    local params = { workspaceFolder = vim.uri_from_fname(root) }
    client.request(c, "tether/listSessions", params, function(err, result)
      if err then
        return log.rpc_error("could not list sessions", err)
      end
      local infos = result.sessions or {}
      if #infos == 0 then
        return log.info("no sessions yet in " .. root)
      end
      vim.ui.select(infos, {
        prompt = "Resume a Tether session",
        kind = "tether.session",
        format_item = M.session_label,
      }, function(info)
        if info then
          session.load(root, info.sessionId, on_done)
        end
      end)
    end)
  end)
end

--- Pick a turn of the current session and rewind to before it.
---@param s tether.Session
---@param on_done? fun(restored: string[])
function M.rewind(s, on_done)
  if s.busy > 0 then
    return log.warn("cancel the running turn before rewinding")
  end
  if #s.turns == 0 then
    return log.info("nothing to rewind: no turns yet")
  end
  local turns = {}
  for i = #s.turns, 1, -1 do
    turns[#turns + 1] = s.turns[i]
  end
  vim.ui.select(turns, {
    prompt = "Rewind to before (files and conversation)",
    kind = "tether.turn",
    format_item = function(turn)
      return turn.prompt ~= "" and turn.prompt or turn.turnId
    end,
  }, function(turn)
    if turn then
      session.rewind(s, turn, on_done)
    end
  end)
end

---@param s tether.Session
function M.mode(s)
  vim.ui.select(config.modes, {
    prompt = ("Permission mode (now: %s)"):format(s.mode or "default"),
    kind = "tether.mode",
  }, function(mode)
    if mode then
      session.set_mode(s, mode)
    end
  end)
end

local TASK_ICON = { running = "◐", completed = "✓", failed = "✗", killed = "■" }

---@param task tether.SessionUpdate
---@return string
function M.task_label(task)
  local line = ("%s %s  [%s]"):format(TASK_ICON[task.status] or "?", task.description or task.taskId, task.status)
  if task.summary and task.summary ~= "" then
    line = line .. " — " .. task.summary
  end
  return line
end

--- Background tasks of the session; choosing one jumps to its tool call in the chat.
---@param s tether.Session
function M.tasks(s)
  local tasks = vim.tbl_values(s.tasks)
  if #tasks == 0 then
    return log.info("no background tasks in this session")
  end
  table.sort(tasks, function(a, b)
    return a.taskId < b.taskId
  end)
  vim.ui.select(tasks, { prompt = "Tether tasks", kind = "tether.task", format_item = M.task_label }, function(task)
    local row = task and task.toolCallId and s.chat.text:row_of(task.toolCallId)
    if row then
      s.chat:show()
      local win = s.chat:windows()[1]
      vim.api.nvim_set_current_win(win)
      vim.api.nvim_win_set_cursor(win, { row + 1, 0 })
    end
  end)
end

return M
