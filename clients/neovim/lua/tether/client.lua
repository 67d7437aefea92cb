--- The daemon connection: one `vim.lsp` client per workspace root, started on first use.
--- Every file buffer under a root is attached to its client, so the daemon always reads the
--- unsaved text the user sees (that is what `didOpen`/`didChange` are for here).

local config = require("tether.config")
local log = require("tether.log")

local M = {}

M.name = "tether"

--- Callbacks waiting for a client to finish `initialize`, by client id.
---@type table<integer, fun(client: vim.lsp.Client?)[]>
local waiting = {}

local augroup = nil ---@type integer?

--- Clients whose daemon process has exited.
---@type table<integer, true>
local exited = {}

--- Callbacks waiting for a client's daemon to exit, by client id.
---@type table<integer, fun()[]>
local exit_waiters = {}

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

--- The workspace root of a buffer: its marker folder, else the current directory. The chat
--- buffer remembers the root of its session.
---@param bufnr? integer
---@return string
function M.root_for(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local chat_root = vim.b[bufnr].tether_root
  if chat_root then
    return chat_root
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

---@return table<string, any>
local function init_options()
  local opts = vim.deepcopy(config.options.init_options)
  opts.model = opts.model or config.options.model
  opts.permissionMode = opts.permissionMode or config.options.permission_mode
  return opts
end

--- Handlers are thin: each `require`s its module on first use.
---@return table<string, lsp.Handler>
local function handlers()
  return {
    ["tether/sessionUpdate"] = function(_, params, ctx)
      require("tether.session").on_update(params, ctx)
    end,
    ["tether/requestPermission"] = function(_, params, ctx)
      return require("tether.permission").handle(params, ctx)
    end,
    ["tether/saveDocuments"] = function(_, params, ctx)
      return require("tether.edits").save_documents(params, ctx)
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
function M.stop_all(timeout)
  local clients = M.all()
  for _, client in ipairs(clients) do
    client:stop()
  end
  return vim.wait(timeout, function()
    for _, client in ipairs(clients) do
      if not exited[client.id] then
        return false
      end
    end
    return true
  end, 10)
end

--- Attach file buffers opened later (including those `applyEdit` loads) to their root's client.
local function watch_buffers()
  if augroup then
    return
  end
  augroup = vim.api.nvim_create_augroup("tether.attach", { clear = true })
  -- Neovim sends `shutdown` when it quits but does not wait for the answer. Waiting briefly
  -- for our daemons lets them close their transcripts (and the locks on them), so that a
  -- Neovim started right after can resume the session.
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = augroup,
    callback = function()
      M.stop_all(2000)
    end,
  })
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = augroup,
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
local function on_init(client)
  attach_loaded_buffers(client)
  local callbacks = waiting[client.id] or {}
  waiting[client.id] = nil
  for _, cb in ipairs(callbacks) do
    cb(client)
  end
end

--- Start (or reuse) the client of `root` and call `cb` once it is initialized, or with nil
--- (the user has been told why) if the daemon cannot start.
---@param root string
---@param cb fun(client: vim.lsp.Client?)
function M.with_client(root, cb)
  local existing = M.get(root)
  if existing and existing.initialized then
    cb(existing)
    return
  end
  local cmd = vim.deepcopy(config.options.cmd)
  local daemon = require("tether.install").find(cmd[1])
  if not daemon then
    log.error(require("tether.install").missing_message(cmd[1]))
    return cb(nil)
  end
  cmd[1] = daemon
  watch_buffers()
  local id = existing and existing.id
    or vim.lsp.start({
      name = M.name,
      cmd = cmd,
      cmd_env = config.options.cmd_env,
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
      capabilities = capabilities(),
      init_options = init_options(),
      handlers = handlers(),
      on_init = on_init,
      on_exit = function(code, signal, client_id)
        exited[client_id] = true
        local never_ready = waiting[client_id] or {}
        waiting[client_id] = nil
        local waiters = exit_waiters[client_id] or {}
        exit_waiters[client_id] = nil
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
          require("tether.session").on_exit(client_id, code, signal)
        end)
      end,
    }, { attach = false })
  if not id then
    log.error("could not start the daemon: " .. table.concat(config.options.cmd, " "))
    return cb(nil)
  end
  waiting[id] = waiting[id] or {}
  table.insert(waiting[id], cb)
end

--- Stop the client of `root` and call `cb` once its daemon has exited (a graceful stop
--- first, so it closes its transcripts; terminated if it takes longer than a few seconds).
---@param root string
---@param cb fun()
function M.stop(root, cb)
  local client = M.get(root)
  if not client then
    return cb()
  end
  local id = client.id
  exit_waiters[id] = exit_waiters[id] or {}
  table.insert(exit_waiters[id], cb)
  client:stop()
  vim.defer_fn(function()
    if not exited[id] then
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
