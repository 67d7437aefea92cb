--- Sessions: the conversation state the plugin keeps per daemon session (chat, turns, plan,
--- usage, tasks) and the requests that drive it. One session is "current" per workspace root.

local client = require("tether.client")
local config = require("tether.config")
local log = require("tether.log")

local M = {}

---@class tether.Turn
---@field turnId string
---@field prompt string

---@class tether.Session
---@field id string
---@field root string
---@field client_id integer
---@field chat tether.Chat
---@field busy integer Prompts sent and not answered yet.
---@field turns tether.Turn[] Live turns in conversation order, for `:TetherRewind`.
---@field mode? tether.Mode
---@field plan? tether.PlanEntry[]
---@field live? tether.Usage Usage of the running turn so far.
---@field total? tether.Usage Usage of the finished turns (the whole session after a resume).
---@field counted table<string, true> Turns whose usage is in `total`.
---@field ctx? {tokens: integer, window: integer} Context use at the last model call.
---@field tasks table<string, tether.SessionUpdate> Background tasks by taskId.
---@field context tether.ContentBlock[] Selections that go with the next prompt.
---@field questions tether.Question[] Permission questions waiting for an answer.
---@field restarting? boolean `:TetherRestart` is replacing its daemon.

---@type table<string, tether.Session>
M.sessions = {}
---@type table<string, string> root -> session id
M.current = {}
--- Callbacks waiting for a session that is being created, by root.
---@type table<string, fun(s: tether.Session)[]>
local creating = {}

---@param id string
---@param root string
---@param client_id integer
---@return tether.Session
local function remember(id, root, client_id)
  ---@type tether.Session
  local s = {
    id = id,
    root = root,
    client_id = client_id,
    busy = 0,
    turns = {},
    tasks = {},
    context = {},
    questions = {},
    counted = {},
  }
  s.chat = require("tether.chat").new(s)
  M.sessions[id] = s
  M.current[root] = id
  return s
end

---@param s tether.Session
---@return vim.lsp.Client?
function M.client_of(s)
  local c = vim.lsp.get_client_by_id(s.client_id)
  if c and not c:is_stopped() then
    return c
  end
end

--- The current session of `root` if there is a live one.
---@param root string
---@return tether.Session?
function M.current_of(root)
  local s = M.current[root] and M.sessions[M.current[root]]
  if s and M.client_of(s) then
    return s
  end
end

--- Call `cb` with the current session of `root`, starting the daemon and a session if needed.
---@param root string
---@param cb fun(s: tether.Session)
function M.with_session(root, cb)
  local s = M.current_of(root)
  if s then
    return cb(s)
  end
  if creating[root] then
    table.insert(creating[root], cb)
    return
  end
  creating[root] = { cb }
  client.with_client(root, function(c)
    if not c then
      creating[root] = nil
      return
    end
    local params = { workspaceFolder = vim.uri_from_fname(root), permissionMode = config.options.permission_mode }
    client.request(c, "tether/newSession", params, function(err, result)
      local callbacks = creating[root] or {}
      creating[root] = nil
      if err then
        -- Often the environment (an API key): once fixed in Neovim, a new daemon sees it.
        return log.rpc_error("could not start a session (fix, then :TetherRestart)", err)
      end
      local new = remember(result.sessionId, root, c.id)
      new.mode = result.mode or config.options.permission_mode or "default"
      for _, fn in ipairs(callbacks) do
        fn(new)
      end
    end)
  end)
end

---@param content tether.ContentBlock[]
---@return string
local function text_of(content)
  local parts = {}
  for _, block in ipairs(content or {}) do
    if block.type == "text" then
      parts[#parts + 1] = block.text
    end
  end
  return table.concat(parts, " ")
end

---@param a? tether.Usage
---@param b tether.Usage
---@return tether.Usage
local function add_usage(a, b)
  local out = vim.deepcopy(a or {})
  for _, key in ipairs({ "inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens" }) do
    out[key] = (out[key] or 0) + (b[key] or 0)
  end
  if out.costUsd or b.costUsd then
    out.costUsd = (out.costUsd or 0) + (b.costUsd or 0)
  end
  return out
end

--- A turn ended: its usage joins the session's totals (once, even when two prompts were
--- answered by the same turn).
---@param s tether.Session
---@param result tether.PromptResult
local function count_turn(s, result)
  if result.usage and result.turnId and not s.counted[result.turnId] then
    s.counted[result.turnId] = true
    s.total = add_usage(s.total, result.usage)
  end
  s.live = nil
end

--- Send a prompt (with any selections added since the last one, and `links`).
---@param s tether.Session
---@param text string
---@param on_done? fun(err: lsp.ResponseError?, result: tether.PromptResult?)
---@param links? tether.ContentBlock[] Resource links of mentions in the text.
function M.prompt(s, text, on_done, links)
  local content = s.context
  s.context = {}
  vim.list_extend(content, links or {})
  if text ~= "" then
    content[#content + 1] = { type = "text", text = text }
  end
  local c = M.client_of(s)
  if #content == 0 or not c then
    return log.warn(c and "nothing to send" or "the daemon is not running")
  end
  s.chat:show()
  s.busy = s.busy + 1
  s.chat:refresh_status()
  client.request(c, "tether/prompt", { sessionId = s.id, prompt = content }, function(err, result)
    s.busy = math.max(0, s.busy - 1)
    if err then
      log.rpc_error("prompt failed", err)
      s.chat:note("**Error:** " .. (err.message or "the prompt failed"))
    else
      local known = vim.iter(s.turns):any(function(t)
        return t.turnId == result.turnId
      end)
      if not known then
        s.turns[#s.turns + 1] = { turnId = result.turnId, prompt = text_of(content) }
      end
      count_turn(s, result)
      if result.error then
        log.error(result.error.message)
      end
    end
    if s.busy == 0 then
      -- The turn is over: a question still open was withdrawn with it.
      require("tether.permission").withdraw(s)
    end
    s.chat:refresh_status()
    if on_done then
      on_done(err, result)
    end
  end)
end

--- Ask for a prompt with `vim.ui.input` (any override works) and send it.
---@param s tether.Session
function M.ask_and_prompt(s)
  vim.ui.input({ prompt = "Tether> " }, function(text)
    if text and text ~= "" then
      M.prompt(s, text)
    end
  end)
end

---@param s tether.Session
function M.cancel(s)
  local c = M.client_of(s)
  if not c or s.busy == 0 then
    return log.info("no turn is running")
  end
  client.request(c, "tether/cancel", { sessionId = s.id }, function(err)
    if err then
      log.rpc_error("cancel failed", err)
    end
  end)
end

---@param s tether.Session
---@param mode tether.Mode
function M.set_mode(s, mode)
  local c = M.client_of(s)
  if not c then
    return
  end
  client.request(c, "tether/setMode", { sessionId = s.id, mode = mode }, function(err)
    if err then
      return log.rpc_error("could not set the mode", err)
    end
    s.mode = mode
    s.chat:refresh_status()
  end)
end

--- Put files back as they were before `turn` and continue the conversation from there.
---@param s tether.Session
---@param turn tether.Turn
---@param on_done? fun(restored: string[])
function M.rewind(s, turn, on_done)
  local c = M.client_of(s)
  if not c then
    return
  end
  client.request(c, "tether/rewind", { sessionId = s.id, turnId = turn.turnId }, function(err, result)
    if err then
      return log.rpc_error("rewind failed", err)
    end
    s.chat:mark_rewound(turn.turnId)
    for i, t in ipairs(s.turns) do
      if t.turnId == turn.turnId then
        for j = #s.turns, i, -1 do
          table.remove(s.turns, j)
        end
        break
      end
    end
    local files = vim.tbl_map(function(uri)
      return require("tether.render").short_path(uri, s.root)
    end, result.restored or {})
    s.chat:note(("_Rewound to before “%s”; restored %s._"):format(
      turn.prompt,
      #files > 0 and table.concat(files, ", ") or "no files"
    ))
    if on_done then
      on_done(result.restored or {})
    end
  end)
end

--- Track the state an update carries, then render it.
---@param s tether.Session
---@param update tether.SessionUpdate
---@param turn_id? string
local function absorb(s, update, turn_id)
  local kind = update.kind
  if kind == "plan" then
    s.plan = update.entries
  elseif kind == "usage" then
    s.live = update --[[@as tether.Usage]]
    if update.contextWindow then
      s.ctx = { tokens = update.contextTokens or 0, window = update.contextWindow }
    end
  elseif kind == "task" then
    s.tasks[update.taskId] = update
  elseif kind == "mode" then
    s.mode = update.mode
  end
  s.chat:apply(update, turn_id)
end

--- `tether/sessionUpdate` notifications.
---@param params {sessionId: string, turnId: string, update: tether.SessionUpdate}
function M.on_update(params, _)
  local s = M.sessions[params.sessionId]
  if s then
    absorb(s, params.update, params.turnId)
  end
end

--- Resume an earlier session: load it in the daemon and render its history.
---@param root string
---@param session_id string
---@param cb? fun(s: tether.Session)
function M.load(root, session_id, cb)
  local known = M.sessions[session_id]
  if known and M.client_of(known) then
    M.current[root] = session_id
    known.chat:show()
    return cb and cb(known)
  end
  client.with_client(root, function(c)
    if not c then
      return
    end
    client.request(c, "tether/loadSession", { sessionId = session_id }, function(err, result)
      if err then
        return log.rpc_error("could not resume the session", err)
      end
      local s = remember(session_id, root, c.id)
      local last_usage = {} ---@type table<string, tether.Usage>
      local seen = {} ---@type table<string, true>
      for _, update in ipairs(result.history or {}) do
        local turn = update.turnId
        if update.kind == "user_message" and turn and turn ~= "" and not seen[turn] then
          seen[turn] = true
          s.turns[#s.turns + 1] = { turnId = turn, prompt = text_of(update.content) }
        end
        absorb(s, update, turn)
        if update.kind == "usage" and update.turnId then
          last_usage[update.turnId] = update --[[@as tether.Usage]]
        end
      end
      s.live = nil
      s.mode = result.mode or s.mode
      if result.usage then
        s.total = result.usage
      else -- a daemon without session totals: the last report of each turn is its usage
        for turn_id, usage in pairs(last_usage) do
          count_turn(s, { turnId = turn_id, usage = usage, stopReason = "end_turn" })
        end
      end
      s.chat:note("_Session resumed._")
      s.chat:show()
      if cb then
        cb(s)
      end
    end)
  end)
end

--- Restart the daemon of `root` (with Neovim's environment as it is now, e.g. after fixing
--- an API key) and continue the current session in the new one; its chat stays as it is.
---@param root string
---@param cb? fun(s: tether.Session?)
function M.restart(root, cb)
  local s = M.current[root] and M.sessions[M.current[root]]
  if s and s.busy > 0 then
    log.info("restarting the daemon: the running turn stops")
  end
  if s then
    s.restarting = true
  end
  client.stop(root, function()
    client.with_client(root, function(c)
      if not c or not s then
        if s then
          s.restarting = nil
        end
        if c then
          log.info("daemon restarted")
        end
        return cb and cb(nil)
      end
      client.request(c, "tether/loadSession", { sessionId = s.id }, function(err, result)
        s.restarting = nil
        if err then
          log.rpc_error("the daemon restarted, but could not continue the session", err)
          return cb and cb(nil)
        end
        s.client_id, s.busy = c.id, 0
        M.current[root] = s.id
        s.mode = result.mode or s.mode
        s.total = result.usage or s.total
        s.chat:note("_Daemon restarted; the session continues._")
        s.chat:refresh_status()
        if cb then
          cb(s)
        end
      end)
    end)
  end)
end

--- The daemon of `client_id` exited: its sessions can no longer run. The next command
--- starts a new daemon and session (`:TetherSessions` resumes this one).
---@param client_id integer
---@param code integer
---@param signal integer
function M.on_exit(client_id, code, signal)
  for id, s in pairs(M.sessions) do
    if s.client_id == client_id then
      s.busy = 0
      require("tether.permission").withdraw(s)
      if M.current[s.root] == id then
        M.current[s.root] = nil
      end
      if not s.restarting and (code ~= 0 or (signal or 0) ~= 0) then
        local how = code ~= 0 and ("code %d"):format(code) or ("signal %d"):format(signal)
        s.chat:note(("_The daemon exited (%s); :TetherSessions resumes this session._"):format(how))
      end
      s.chat:refresh_status()
    end
  end
end

return M
