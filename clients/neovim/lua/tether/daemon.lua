--- The daemon connection (the RPC layer): one `vim.lsp` client per workspace root, started
--- on first use, and the requests and server requests it carries. It knows nothing of
--- sessions or views: what to do with the daemon's notifications and questions is given to
--- `new()` by the composition root (`app.lua`).
---
--- Every file buffer under a root is attached to its client, so the daemon always reads the
--- unsaved text the user sees (that is what `didOpen`/`didChange` are for here).

local config = require("tether.config")
local log = require("tether.log")

local M = {}

M.name = "tether"

--- Seconds a daemon gets to exit after `shutdown` before it is terminated.
local STOP_GRACE_MS = 3000

---@param path string
---@return string
local function real(path)
  return vim.uv.fs_realpath(path) or vim.fs.normalize(path)
end

--- Is `path` inside the folder `root`?
---@param path string
---@param root string
---@return boolean
local function inside(path, root)
  return path == root or vim.startswith(path, root == "/" and root or root .. "/")
end

--- The workspace root of a buffer: its marker folder, else the current directory. Tether's
--- own buffers remember the root of their session.
---@param bufnr? integer
---@return string
function M.root_for(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local own = vim.b[bufnr].tether_root
  if own then
    return own
  end
  if vim.bo[bufnr].buftype == "" and vim.api.nvim_buf_get_name(bufnr) ~= "" then
    local root = vim.fs.root(bufnr, config.options.root_markers)
    if root then
      return real(root)
    end
  end
  return real(vim.fn.getcwd())
end

--- A file buffer that belongs to the workspace `root`.
---@param bufnr integer
---@param root string
---@return boolean
local function belongs(bufnr, root)
  if not vim.api.nvim_buf_is_loaded(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then
    return false
  end
  name = vim.fs.normalize(name)
  return inside(name, root) or inside(real(name), root)
end

---@return vim.lsp.Client[]
function M.all()
  return vim.lsp.get_clients({ name = M.name })
end

--- The running client of `root`, if any.
---@param root string
---@return vim.lsp.Client?
function M.get(root)
  for _, client in ipairs(M.all()) do
    if client.root_dir == root and not client:is_stopped() then
      return client
    end
  end
end

--- The client `id` while it runs.
---@param id integer
---@return vim.lsp.Client?
function M.client(id)
  local c = vim.lsp.get_client_by_id(id)
  if c and not c:is_stopped() then
    return c
  end
end

--- A server request answered later: `fn(params, ctx, reply)` calls `reply(result)` once,
--- now or when the user has answered.
---
--- Neovim 0.11 documents only synchronous handlers (`:help lsp-handler`: they return
--- `result, err`). Its own `window/showMessageRequest` handler (runtime/lua/vim/lsp/
--- handlers.lua) waits for `vim.ui.select` by yielding the coroutine that `rpc.lua` runs
--- every server request in, and sends the result when resumed; we wait the same way, as the
--- least fragile choice: it is what core relies on. Outside such a coroutine (should that
--- ever change) the request fails with an error naming the cause instead of hanging.
---@param fn fun(params: table, ctx: lsp.HandlerContext, reply: fun(result: table))
---@return lsp.Handler
function M.deferred(fn)
  return function(_, params, ctx)
    local co, is_main = coroutine.running()
    if not co or is_main then
      local msg = "tether: this Neovim cannot answer a question later (no request coroutine)"
      log.error(msg)
      return nil, vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InternalError, msg)
    end
    if M.exiting then
      return M.CANCELLED
    end
    local answer, waiting = nil, false
    local function reply(result)
      if answer ~= nil then
        return
      end
      answer = result
      M.pending[reply] = nil
      if waiting then
        vim.schedule(function()
          coroutine.resume(co)
        end)
      end
    end
    M.pending[reply] = true
    fn(params, ctx, reply)
    if answer == nil then
      waiting = true
      coroutine.yield()
    end
    return answer
  end
end

--- The answer to a question nobody can answer any more (Neovim is quitting).
M.CANCELLED = { outcome = { outcome = "cancelled" } }

--- Replies of the questions still waiting (`M.deferred`).
---@type table<fun(result: table), true>
M.pending = {}

--- Set once Neovim quits: no question is asked, and waiting ones are answered "cancelled".
M.exiting = false

--- Neovim quits (`:qa`, or its terminal closed): answer every waiting question with a
--- cancellation, so neither the request nor Neovim's exit waits for a user who is gone.
function M.cancel_pending()
  M.exiting = true
  for reply in pairs(M.pending) do
    reply(M.CANCELLED)
  end
end

---@class tether.DaemonHandlers
---@field on_update fun(params: table, ctx: lsp.HandlerContext) `tether/sessionUpdate`.
---@field on_question fun(params: tether.PermissionParams, ctx: lsp.HandlerContext, reply: fun(result: table))
---@field on_cancel fun(params: {id: integer|string}, ctx: lsp.HandlerContext) `$/cancelRequest` from the daemon.
---@field on_saved fun(files: string[], ctx: lsp.HandlerContext) Buffers written after an agent edit that held
--- the user's unsaved changes too.
---@field on_exit fun(client_id: integer, code: integer, signal: integer)

---@class tether.Daemon
---@field handlers tether.DaemonHandlers
---@field waiting table<integer, fun(client: vim.lsp.Client?)[]> Callbacks waiting for `initialize`.
---@field exited table<integer, true> Clients whose daemon process has exited.
---@field exit_waiters table<integer, fun()[]> Callbacks waiting for a daemon to exit.
---@field augroup? integer
local Daemon = {}
Daemon.__index = Daemon

---@param handlers tether.DaemonHandlers
---@return tether.Daemon
function M.new(handlers)
  return setmetatable({ handlers = handlers, waiting = {}, exited = {}, exit_waiters = {} }, Daemon)
end

---@return lsp.ClientCapabilities
local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = {
    tether = {
      permissionRequest = true,
      sessionUpdates = true,
      saveDocuments = config.options.save_after_edit,
      diagnostics = config.options.forward_diagnostics,
    },
  }
  return caps
end

--- The `initializationOptions` this plugin sends: its `init_options` with `model` and
--- `permission_mode` from `setup()`.
---@return table<string, any>
function M.init_options()
  local opts = vim.deepcopy(config.options.init_options)
  opts.model = opts.model or config.options.model
  opts.permissionMode = opts.permissionMode or config.options.permission_mode
  return opts
end

---@return table<string, lsp.Handler>
function Daemon:_lsp_handlers()
  local h = self.handlers
  return {
    ["tether/sessionUpdate"] = function(_, params, ctx)
      if not M.exiting then
        h.on_update(params, ctx)
      end
    end,
    ["tether/requestPermission"] = M.deferred(h.on_question),
    ["$/cancelRequest"] = function(_, params, ctx)
      h.on_cancel(params, ctx)
    end,
    ["tether/saveDocuments"] = function(_, params, ctx)
      local result, err, with_user_changes = require("tether.edits").save_documents(params, ctx)
      if #with_user_changes > 0 then
        h.on_saved(with_user_changes, ctx)
      end
      return result, err
    end,
    ["workspace/applyEdit"] = function(_, params, ctx)
      return require("tether.edits").apply_edit(params, ctx)
    end,
  }
end

---@param client vim.lsp.Client
local function attach_loaded_buffers(client)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if belongs(bufnr, client.root_dir) then
      vim.lsp.buf_attach_client(bufnr, client.id)
    end
  end
end

--- Stop every Tether client and wait (at most `timeout` ms) until their daemons have exited.
---@param timeout integer
---@return boolean all exited
function Daemon:stop_all(timeout)
  local clients = M.all()
  for _, client in ipairs(clients) do
    client:stop()
  end
  return vim.wait(timeout, function()
    for _, client in ipairs(clients) do
      if not self.exited[client.id] then
        return false
      end
    end
    return true
  end, 10)
end

--- Attach file buffers opened later (including those `applyEdit` loads) to their root's client.
function Daemon:_watch_buffers()
  if self.augroup then
    return
  end
  self.augroup = vim.api.nvim_create_augroup("tether.attach", { clear = true })
  -- Neovim sends `shutdown` when it quits but does not wait for the answer. Waiting briefly
  -- for our daemons lets them close their transcripts (and the locks on them), so that a
  -- Neovim started right after can resume the session.
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = self.augroup,
    callback = function()
      -- No UI may be left to answer a "-- More --" prompt (the terminal closed): a message
      -- during the wait must not block the exit.
      vim.o.more = false
      M.cancel_pending()
      self:stop_all(2000)
    end,
  })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = self.augroup,
    callback = function(ev)
      for _, client in ipairs(M.all()) do
        if belongs(ev.buf, client.root_dir) then
          vim.lsp.buf_attach_client(ev.buf, client.id)
        end
      end
    end,
  })
end

---@param client vim.lsp.Client
function Daemon:_on_init(client)
  attach_loaded_buffers(client)
  local callbacks = self.waiting[client.id] or {}
  self.waiting[client.id] = nil
  for _, cb in ipairs(callbacks) do
    cb(client)
  end
end

---@param code integer
---@param signal integer
---@param client_id integer
function Daemon:_on_exit(code, signal, client_id)
  self.exited[client_id] = true
  local never_ready = self.waiting[client_id] or {}
  self.waiting[client_id] = nil
  local waiters = self.exit_waiters[client_id] or {}
  self.exit_waiters[client_id] = nil
  vim.schedule(function()
    for _, fn in ipairs(waiters) do
      fn()
    end
    if #never_ready > 0 then
      log.error(("the daemon exited during start-up (code %d); see :checkhealth tether"):format(code))
    end
    for _, fn in ipairs(never_ready) do
      fn(nil)
    end
    self.handlers.on_exit(client_id, code, signal)
  end)
end

--- Start (or reuse) the client of `root` and call `cb` once it is initialized, or with nil
--- (the user has been told why) if the daemon cannot start.
---@param root string
---@param cb fun(client: vim.lsp.Client?)
function Daemon:with_client(root, cb)
  local existing = M.get(root)
  if existing and existing.initialized then
    cb(existing)
    return
  end
  local cmd = vim.deepcopy(config.options.cmd)
  local install = require("tether.install")
  local path = install.find(cmd[1])
  if not path then
    return install.ensure(cmd[1], function(installed)
      if not installed then
        return cb(nil)
      end
      self:with_client(root, cb)
    end)
  end
  cmd[1] = path
  self:_watch_buffers()
  local id = existing and existing.id
    or vim.lsp.start({
      name = M.name,
      cmd = cmd,
      cmd_env = config.options.cmd_env,
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
      capabilities = capabilities(),
      init_options = M.init_options(),
      handlers = self:_lsp_handlers(),
      on_init = function(client)
        self:_on_init(client)
      end,
      on_exit = function(code, signal, client_id)
        self:_on_exit(code, signal, client_id)
      end,
    }, { attach = false })
  if not id then
    log.error("could not start the daemon: " .. table.concat(config.options.cmd, " "))
    return cb(nil)
  end
  self.waiting[id] = self.waiting[id] or {}
  table.insert(self.waiting[id], cb)
end

--- Stop the client of `root` and call `cb` once its daemon has exited (a graceful stop
--- first, so it closes its transcripts; terminated if it takes longer than a few seconds).
---@param root string
---@param cb fun()
function Daemon:stop(root, cb)
  local client = M.get(root)
  if not client then
    return cb()
  end
  local id = client.id
  self.exit_waiters[id] = self.exit_waiters[id] or {}
  table.insert(self.exit_waiters[id], cb)
  client:stop()
  vim.defer_fn(function()
    if not self.exited[id] then
      client:stop(true)
    end
  end, STOP_GRACE_MS)
end

--- Send a request; `cb(err, result)` also runs (with an error) when the client is gone.
---@param client vim.lsp.Client
---@param method string
---@param params table
---@param cb fun(err: lsp.ResponseError?, result: any)
---@return integer? request_id
function M.request(client, method, params, cb)
  local ok, request_id = client:request(method, params, function(err, result)
    cb(err, result)
  end)
  if not ok then
    cb({ code = -32603, message = "the daemon is not running" }, nil)
    return nil
  end
  return request_id
end

return M
