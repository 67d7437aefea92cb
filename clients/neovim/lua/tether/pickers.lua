--- The pickers behind `:TetherSessions`, `:TetherRewind`, `:TetherMode` and `:TetherTasks`.
--- All of them go through `vim.ui.select`, so the user's picker of choice shows them.

local app = require("tether.app")
local config = require("tether.config")
local daemon = require("tether.daemon")
local log = require("tether.log")

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
  local registry = app.get()
  registry.daemon:with_client(root, function(c)
    if not c then
      return
    end
    local params = { workspaceFolder = vim.uri_from_fname(root) }
    daemon.request(c, "tether/listSessions", params, function(err, result)
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
          registry:load(root, info.sessionId, function(s)
            app.chat(s):show()
            if on_done then
              on_done(s)
            end
          end)
        end
      end)
    end)
  end)
end

--- One line for a turn in the rewind list: its number, the first line of its prompt (with
--- how many more there are), and how it ended when that was not normally.
---@param turn tether.TurnInfo
---@return string
function M.turn_label(turn)
  local lines = vim.split(vim.trim(turn.prompt), "\n", { plain = true })
  local text = lines[1] ~= "" and lines[1] or "(attachments only)"
  if #lines > 1 then
    text = ("%s  (+%d line%s)"):format(text, #lines - 1, #lines == 2 and "" or "s")
  end
  local label = ("%d. %s"):format(turn.n, text)
  if turn.stop == "error" then
    label = label .. "  [failed" .. (turn.error and (": " .. turn.error:gsub("\n", " ")) or "") .. "]"
  elseif turn.stop == "cancelled" then
    label = label .. "  [cancelled]"
  end
  return label
end

--- Pick a turn of the session and rewind to before it.
---@param s tether.Session
---@param on_done? fun(restored: string[])
function M.rewind(s, on_done)
  local st = s.state
  if st.busy > 0 or st.running then
    return log.warn("cancel the running turn before rewinding")
  end
  if #st.turns == 0 then
    return log.info("nothing to rewind: no turns yet")
  end
  local turns = {}
  for i = #st.turns, 1, -1 do
    turns[#turns + 1] = st.turns[i]
  end
  vim.ui.select(turns, {
    prompt = "Rewind to before (files and conversation)",
    kind = "tether.turn",
    format_item = M.turn_label,
  }, function(turn)
    if turn then
      s:rewind(turn.turnId, on_done)
    end
  end)
end

--- "ask before edits (default)": the words the winbar uses, then the mode's name.
---@param mode tether.Mode
---@return string
function M.mode_label(mode)
  return ("%s (%s)"):format(require("tether.status").MODE_LABEL[mode] or mode, mode)
end

---@param s tether.Session
function M.mode(s)
  local now = s.state.mode or "default"
  vim.ui.select(config.modes, {
    prompt = ("Permission mode (now: %s)"):format(require("tether.status").MODE_LABEL[now] or now),
    kind = "tether.mode",
    format_item = M.mode_label,
  }, function(mode)
    if mode then
      s:set_mode(mode)
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
  local tasks = vim.tbl_values(s.state.tasks)
  if #tasks == 0 then
    return log.info("no background tasks in this session")
  end
  table.sort(tasks, function(a, b)
    return a.taskId < b.taskId
  end)
  vim.ui.select(tasks, { prompt = "Tether tasks", kind = "tether.task", format_item = M.task_label }, function(task)
    local chat = app.chat(s)
    local row = task and task.toolCallId and chat.text:row_of("t:" .. task.toolCallId)
    if row then
      chat:show()
      local win = chat:windows()[1]
      vim.api.nvim_set_current_win(win)
      vim.api.nvim_win_set_cursor(win, { row + 1, 0 })
    end
  end)
end

return M
