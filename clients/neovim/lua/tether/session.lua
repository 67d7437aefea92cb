--- One daemon session as the plugin holds it: its state (`state.lua`, changed only through
--- `dispatch`), the requests that drive it, and the answers owed to the daemon's questions.
--- Views subscribe to a session; it never calls them.

local daemon = require("tether.daemon")
local log = require("tether.log")
local state = require("tether.state")

local M = {}

---@alias tether.SessionEvent {type: "changed", changed: string[], action: tether.Action}|{type: "released"}

---@class tether.Session
---@field id string
---@field root string
---@field client_id integer
---@field state tether.State
---@field replies table<string, fun(result: table)> What each open question's answer goes to.
---@field subscribers table<integer, fun(s: tether.Session, event: tether.SessionEvent)>
---@field next_sub integer
---@field next_question integer
---@field released boolean
---@field restarting? boolean
local Session = {}
Session.__index = Session

---@param id string
---@param root string
---@param client_id integer
---@param mode? tether.Mode
---@return tether.Session
function M.new(id, root, client_id, mode)
  return setmetatable({
    id = id,
    root = root,
    client_id = client_id,
    state = state.new(id, root, mode),
    replies = {},
    subscribers = {},
    next_sub = 0,
    next_question = 0,
    released = false,
  }, Session)
end

---@param event tether.SessionEvent
function Session:_publish(event)
  local subscribers = {}
  for id, fn in pairs(self.subscribers) do
    subscribers[id] = fn
  end
  for _, fn in pairs(subscribers) do
    fn(self, event)
  end
end

--- Change the state, then tell the subscribers which items changed.
---@param action tether.Action
function Session:dispatch(action)
  if self.released then
    return
  end
  local _, changed = state.reduce(self.state, action)
  self:_publish({ type = "changed", changed = changed, action = action })
  self:_settle(action)
  if action.type == "update" and action.live and action.update.kind == "changes" then
    self:refresh_changes()
  end
end

--- Ask the daemon for the session's pending and kept hunks (they follow the text as the
--- client has it now); the state's `changes` gets them.
---@param cb? fun()
function Session:refresh_changes(cb)
  local c = self:client()
  if not c then
    return
  end
  local params = { sessionId = self.id, states = { "pending", "kept" } }
  daemon.request(c, "tether/listChanges", params, function(err, result)
    if err then
      return log.rpc_error("could not list the changes", err)
    end
    self:dispatch({ type = "changes", listing = result })
    if cb then
      cb()
    end
  end)
end

--- Keep or undo hunks: `what` is `{ hunkIds }` or `{ uri }` (all pending in the file).
--- What could not be done is said with its reason.
---@param verb "keep"|"undo"
---@param what {hunkIds?: string[], uri?: string}
---@param cb? fun(done: string[])
function Session:settle_changes(verb, what, cb)
  local c = self:client()
  if not c then
    return log.warn("the daemon is not running (:TetherSessions resumes this session)")
  end
  local method = verb == "keep" and "tether/keepChanges" or "tether/undoChanges"
  local params = vim.tbl_extend("force", { sessionId = self.id }, what)
  daemon.request(c, method, params, function(err, result)
    if err then
      return log.rpc_error(("could not %s the change"):format(verb), err)
    end
    local lines = {} -- hunk id -> its first line, to name a hunk not settled
    for _, file in ipairs(self.state.changes and self.state.changes.files or {}) do
      for _, hunk in ipairs(file.hunks) do
        lines[hunk.hunkId] = hunk.range and hunk.range.start.line + 1
      end
    end
    for _, miss in ipairs(result.notKept or result.notUndone or {}) do
      local path = require("tether.render").short_path(miss.uri, self.root)
      local at = lines[miss.hunkId] and (":%d"):format(lines[miss.hunkId]) or ""
      log.warn(("%s%s: not %s: %s"):format(path, at, verb == "keep" and "kept" or "undone", miss.reason))
    end
    for _, note in ipairs(result.notes or {}) do
      log.info(note)
    end
    self:refresh_changes(function()
      if cb then
        cb(result.kept or result.undone or {})
      end
    end)
  end)
end

--- Questions the daemon no longer waits for are answered "cancelled": a tool call that
--- finished without it, a turn that ended.
---@param action tether.Action
function Session:_settle(action)
  if next(self.replies) == nil then
    return
  end
  local update = action.type == "update" and action.live and action.update or nil
  for _, q in ipairs(state.open_questions(self.state)) do
    local moot = (action.type == "prompt_done" and self.state.busy == 0)
      or action.type == "detached"
      or (update and update.kind == "turn_end")
      or (
        update
        and update.kind == "tool_call_update"
        and update.toolCallId == q.toolCallId
        and (update.status == "completed" or update.status == "failed")
      )
    if moot then
      self:withdraw(q.id)
    end
  end
end

---@param fn fun(s: tether.Session, event: tether.SessionEvent)
---@return fun() unsubscribe
function Session:subscribe(fn)
  self.next_sub = self.next_sub + 1
  local id = self.next_sub
  self.subscribers[id] = fn
  return function()
    self.subscribers[id] = nil
  end
end

---@return vim.lsp.Client?
function Session:client()
  if self.state.attached then
    return daemon.client(self.client_id)
  end
end

--- Send a prompt: the selections added since the last one, then `content`.
---@param content tether.ContentBlock[]
---@param on_done? fun(err: lsp.ResponseError?, result: tether.PromptResult?)
function Session:prompt(content, on_done)
  local blocks = vim.list_extend(vim.deepcopy(self.state.context), content)
  local c = self:client()
  if #blocks == 0 or not c then
    log.warn(c and "nothing to send" or "the daemon is not running (:TetherSessions resumes this session)")
    return on_done and on_done({ code = -32603, message = "not sent" }, nil)
  end
  self:dispatch({ type = "prompt_sent", content = blocks })
  daemon.request(c, "tether/prompt", { sessionId = self.id, prompt = blocks }, function(err, result)
    if err then
      log.rpc_error("prompt failed", err)
    elseif result.error then
      log.error(require("tether.render").turn_error(result.error.message))
    end
    self:dispatch({ type = "prompt_done", result = result, error = err and (err.message or "the prompt failed") })
    if on_done then
      on_done(err, result)
    end
  end)
end

function Session:cancel()
  local c = self:client()
  if not c or (self.state.busy == 0 and not self.state.running) then
    return log.info("no turn is running")
  end
  daemon.request(c, "tether/cancel", { sessionId = self.id }, function(err)
    if err then
      log.rpc_error("cancel failed", err)
    end
  end)
end

---@param mode tether.Mode
---@param cb? fun()
function Session:set_mode(mode, cb)
  local c = self:client()
  if not c then
    return
  end
  daemon.request(c, "tether/setMode", { sessionId = self.id, mode = mode }, function(err)
    if err then
      return log.rpc_error("could not set the mode", err)
    end
    self:dispatch({ type = "mode", mode = mode })
    if cb then
      cb()
    end
  end)
end

--- Put files back as they were before `turn_id` and continue the conversation from there.
---@param turn_id string
---@param on_done? fun(restored: string[])
function Session:rewind(turn_id, on_done)
  local c = self:client()
  if not c then
    return
  end
  daemon.request(c, "tether/rewind", { sessionId = self.id, turnId = turn_id }, function(err, result)
    if err then
      return log.rpc_error("rewind failed", err)
    end
    local render = require("tether.render")
    local files = vim.tbl_map(function(uri)
      return render.short_path(uri, self.root)
    end, result.restored or {})
    self:dispatch({ type = "rewound", turnId = turn_id, restored = files })
    if on_done then
      on_done(result.restored or {})
    end
  end)
end

--- A question from the daemon; `reply` sends the answer.
---@param params tether.PermissionParams
---@param reply fun(result: table)
function Session:ask(params, reply)
  self.next_question = self.next_question + 1
  local id = tostring(self.next_question)
  local tool = params.toolCall or {}
  self.replies[id] = reply
  self:dispatch({
    type = "question",
    question = {
      id = id,
      kind = params.kind or "tool",
      toolCallId = tool.toolCallId or "",
      title = tool.title or "tool",
      rawInput = tool.rawInput or {},
      content = tool.content or {},
      plan = params.plan or (params.kind == "plan" and (tool.rawInput or {}).plan) or nil,
      options = params.options or {},
      status = "open",
    },
  })
end

--- The open question `id`, if it is open.
---@param id string
---@return tether.QuestionState?
function Session:question(id)
  local item = self.state.index["q:" .. id]
  local q = item and item.question
  return q and q.status == "open" and q or nil
end

--- Answer question `id` with `option_id` (and what the user said with it).
---@param id string
---@param option_id string
---@param feedback? string
---@return boolean answered
function Session:answer(id, option_id, feedback)
  local reply = self.replies[id]
  if not reply or not self:question(id) then
    return false
  end
  self.replies[id] = nil
  local outcome = { outcome = "selected", optionId = option_id }
  if feedback and vim.trim(feedback) ~= "" then
    outcome.feedback = vim.trim(feedback)
  end
  reply({ outcome = outcome })
  self:dispatch({ type = "answered", id = id, optionId = option_id, feedback = outcome.feedback })
  return true
end

--- The daemon no longer waits for question `id`: it gets a cancellation, the chat says so.
---@param id string
function Session:withdraw(id)
  local reply = self.replies[id]
  self.replies[id] = nil
  if reply then
    reply({ outcome = { outcome = "cancelled" } })
  end
  self:dispatch({ type = "withdrawn", id = id })
end

--- The session leaves the plugin: its questions are cancelled, its views let go.
function Session:release()
  if self.released then
    return
  end
  for _, id in ipairs(vim.tbl_keys(self.replies)) do
    self:withdraw(id)
  end
  self.released = true
  self:_publish({ type = "released" })
  self.subscribers = {}
end

return M
