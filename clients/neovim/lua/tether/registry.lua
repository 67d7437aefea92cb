--- The sessions the plugin holds: one is "current" per workspace root. Starting, resuming
--- and restarting sessions, routing the daemon's updates and questions to them, and letting
--- go of those nobody can see any more (their buffers go with them).
---
--- Built by `app.lua` with its dependencies: the daemon connection, and `attach`, which
--- gives a new session its views.

local config = require("tether.config")
local daemon = require("tether.daemon")
local log = require("tether.log")
local session = require("tether.session")
local state = require("tether.state")

local M = {}

---@class tether.Registry
---@field daemon tether.Daemon
---@field attach fun(s: tether.Session)
---@field sessions table<string, tether.Session>
---@field current table<string, string> root -> session id
---@field creating table<string, fun(s: tether.Session)[]> Callbacks waiting for a new session, by root.
local Registry = {}
Registry.__index = Registry

---@param deps {daemon: tether.Daemon, attach: fun(s: tether.Session)}
---@return tether.Registry
function M.new(deps)
  return setmetatable({
    daemon = deps.daemon,
    attach = deps.attach,
    sessions = {},
    current = {},
    creating = {},
  }, Registry)
end

--- Make `s` the current session of its root; the one it replaces is let go unless a
--- turn of it still runs (then when that turn ends).
---@param s tether.Session
function Registry:_make_current(s)
  local before = self.current[s.root]
  self.current[s.root] = s.id
  local old = before and before ~= s.id and self.sessions[before]
  if old then
    self:_maybe_release(old)
  end
end

---@param s tether.Session
function Registry:_maybe_release(s)
  if self.current[s.root] ~= s.id and s.state.busy == 0 and not s.restarting then
    self:release(s)
  end
end

--- Let go of `s`: its questions are cancelled and its buffers wiped. The daemon keeps the
--- session (`:TetherSessions` resumes it).
---@param s tether.Session
function Registry:release(s)
  self.sessions[s.id] = nil
  if self.current[s.root] == s.id then
    self.current[s.root] = nil
  end
  s:release()
end

---@param id string
---@param root string
---@param client_id integer
---@param mode? tether.Mode
---@return tether.Session
function Registry:_add(id, root, client_id, mode)
  local s = session.new(id, root, client_id, mode)
  self.sessions[id] = s
  s:subscribe(function(_, event)
    if event.type == "changed" and event.action.type == "prompt_done" then
      self:_maybe_release(s)
    end
  end)
  self.attach(s)
  self:_make_current(s)
  return s
end

--- The current session of `root`, if the daemon holds it.
---@param root string
---@return tether.Session?
function Registry:current_of(root)
  local s = self.current[root] and self.sessions[self.current[root]]
  if s and s:client() then
    return s
  end
end

--- The session whose views show in buffer `buf` (`b:tether_session`), if held.
---@param buf integer
---@return tether.Session?
function Registry:of_buffer(buf)
  local id = vim.b[buf].tether_session
  return id and self.sessions[id] or nil
end

--- Why a session could not start, in words for a Neovim user.
---@param client vim.lsp.Client
---@param err lsp.ResponseError
---@return string
local function start_failure(client, err)
  local facts = vim.tbl_get(client.server_capabilities or {}, "experimental", "tether") or {}
  if facts.model == vim.NIL or (facts.modelReason and facts.modelReason ~= vim.NIL) then
    return "no model is configured. Set $ANTHROPIC_API_KEY (in Neovim: :let $ANTHROPIC_API_KEY = '…', then "
      .. ":TetherRestart), or setup({ model = 'anthropic:claude-sonnet-4-6' }) or a local server "
      .. "(model = 'openai:<model>@http://localhost:11434/v1'). :checkhealth tether shows what is found"
  end
  return ("could not start a session: %s (fix it, then :TetherRestart)"):format(err.message or vim.inspect(err))
end

--- Call `cb` with the current session of `root`, starting the daemon and a session if needed.
---@param root string
---@param cb fun(s: tether.Session)
function Registry:with_session(root, cb)
  local s = self:current_of(root)
  if s then
    return cb(s)
  end
  if self.creating[root] then
    table.insert(self.creating[root], cb)
    return
  end
  self.creating[root] = { cb }
  self.daemon:with_client(root, function(c)
    if not c then
      self.creating[root] = nil
      return
    end
    local params = { workspaceFolder = vim.uri_from_fname(root), permissionMode = config.options.permission_mode }
    daemon.request(c, "tether/newSession", params, function(err, result)
      local callbacks = self.creating[root] or {}
      self.creating[root] = nil
      if err then
        return log.error(start_failure(c, err))
      end
      local new = self:_add(result.sessionId, root, c.id, result.mode or config.options.permission_mode)
      for _, fn in ipairs(callbacks) do
        fn(new)
      end
    end)
  end)
end

--- Resume an earlier session: load it in the daemon and show its history. A session this
--- Neovim still holds (its daemon exited) is resumed in the same chat.
---@param root string
---@param id string
---@param cb? fun(s: tether.Session)
function Registry:load(root, id, cb)
  local known = self.sessions[id]
  if known and known:client() then
    self:_make_current(known)
    return cb and cb(known)
  end
  self.daemon:with_client(root, function(c)
    if not c then
      return
    end
    daemon.request(c, "tether/loadSession", { sessionId = id }, function(err, result)
      if err then
        return log.rpc_error("could not resume the session", err)
      end
      local s = self.sessions[id]
      if s then
        s.client_id = c.id
        s:dispatch({ type = "attached", mode = result.mode })
        s:dispatch({ type = "note", text = "Session resumed in a new daemon.", level = "info" })
        self:_make_current(s)
      else
        s = self:_add(id, root, c.id, result.mode)
        local render = require("tether.render")
        local rewound = vim.tbl_map(function(r)
          return {
            at = r.at,
            turnId = r.turnId,
            history = r.history,
            restored = vim.tbl_map(function(uri)
              return render.short_path(uri, root)
            end, r.restored or {}),
          }
        end, result.rewound or {})
        s:dispatch({
          type = "loaded",
          history = result.history or {},
          rewound = rewound,
          mode = result.mode,
          usage = result.usage,
        })
        s:dispatch({ type = "note", text = "Session resumed.", level = "info" })
      end
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
function Registry:restart(root, cb)
  local s = self.current[root] and self.sessions[self.current[root]]
  if s and (s.state.busy > 0 or s.state.running) then
    log.info("restarting the daemon: the running turn stops")
  end
  if s then
    s.restarting = true
  end
  self.daemon:stop(root, function()
    self.daemon:with_client(root, function(c)
      if not c or not s then
        if s then
          s.restarting = nil
        end
        if c then
          log.info("daemon restarted")
        end
        return cb and cb(nil)
      end
      daemon.request(c, "tether/loadSession", { sessionId = s.id }, function(err, result)
        s.restarting = nil
        if err then
          log.rpc_error("the daemon restarted, but could not continue the session", err)
          return cb and cb(nil)
        end
        s.client_id = c.id
        s:dispatch({
          type = "attached",
          mode = result.mode,
          usage = result.usage,
          note = "Daemon restarted; the session continues.",
        })
        self:_make_current(s)
        if cb then
          cb(s)
        end
      end)
    end)
  end)
end

--- `tether/sessionUpdate`.
---@param params {sessionId: string, turnId: string, update: tether.SessionUpdate}
---@param ctx lsp.HandlerContext
function Registry:on_update(params, ctx)
  local s = self.sessions[params.sessionId]
  if s and s.client_id == ctx.client_id then
    s:dispatch({ type = "update", turnId = params.turnId or "", update = params.update, live = true })
  end
end

--- `tether/requestPermission`: the question goes to its session's chat; a question for a
--- session this Neovim does not hold is cancelled (nobody could see it).
---@param params tether.PermissionParams
---@param ctx lsp.HandlerContext
---@param reply fun(result: table)
function Registry:on_question(params, ctx, reply)
  local s = self.sessions[params.sessionId]
  if not s or s.client_id ~= ctx.client_id then
    return reply({ outcome = { outcome = "cancelled" } })
  end
  s:ask(params, reply)
end

--- `$/cancelRequest` from a daemon: it withdrew a question. The request id is not known to
--- handlers (Neovim does not pass it), so a lone open question of that daemon is the one;
--- with several, each is withdrawn as its tool call or turn ends (`Session:_settle`).
---@param ctx lsp.HandlerContext
function Registry:on_cancel(_, ctx)
  local open = {}
  for _, s in pairs(self.sessions) do
    if s.client_id == ctx.client_id then
      for _, q in ipairs(state.open_questions(s.state)) do
        open[#open + 1] = { s = s, id = q.id }
      end
    end
  end
  if #open == 1 then
    open[1].s:withdraw(open[1].id)
  end
end

--- An agent edit's save also wrote the user's unsaved changes in `uris`: the chat of the
--- session whose turn made the edit says so.
---@param uris string[]
---@param ctx lsp.HandlerContext
function Registry:on_saved(uris, ctx)
  for _, s in pairs(self.sessions) do
    if s.client_id == ctx.client_id and (s.state.running or s.state.busy > 0) then
      local render = require("tether.render")
      local files = vim.tbl_map(function(uri)
        return render.short_path(uri, s.root)
      end, uris)
      s:dispatch({
        type = "note",
        level = "warning",
        text = ("💾 Saved %s with the agent's edit: your unsaved changes in it were written too "):format(
          table.concat(files, ", ")
        ) .. "(u undoes the edit; :help tether-saving).",
      })
    end
  end
end

--- The daemon of `client_id` exited: its sessions can no longer run. The next command
--- starts a new daemon and session (`:TetherSessions` resumes this one).
---@param client_id integer
---@param code integer
---@param signal integer
function Registry:on_exit(client_id, code, signal)
  for _, s in pairs(vim.tbl_values(self.sessions)) do
    if s.client_id == client_id then
      local reason
      if not s.restarting and (code ~= 0 or (signal or 0) ~= 0) then
        local how = code ~= 0 and ("code %d"):format(code) or ("signal %d"):format(signal)
        reason = ("The daemon exited (%s); :TetherSessions resumes this session."):format(how)
      end
      s:dispatch({ type = "detached", reason = reason })
    end
  end
end

--- Sessions whose chat shows in a window of the current tab page.
---@return tether.Session[]
function Registry:visible()
  local out, seen = {}, {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local s = self:of_buffer(vim.api.nvim_win_get_buf(win))
    if s and not seen[s.id] then
      seen[s.id] = true
      out[#out + 1] = s
    end
  end
  return out
end

return M
