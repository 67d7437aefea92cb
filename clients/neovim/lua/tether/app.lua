--- The composition root: builds the daemon connection and the session registry once, with
--- the views each new session gets. Commands and the API reach the plugin through here.

local M = {}

---@type tether.Registry?
local app = nil

--- The registry, built on first use.
---@return tether.Registry
function M.get()
  if app then
    return app
  end
  local registry ---@type tether.Registry
  local daemon = require("tether.daemon").new({
    on_update = function(params, ctx)
      registry:on_update(params, ctx)
    end,
    on_question = function(params, ctx, reply)
      registry:on_question(params, ctx, reply)
    end,
    on_cancel = function(params, ctx)
      registry:on_cancel(params, ctx)
    end,
    on_saved = function(files, ctx)
      registry:on_saved(files, ctx)
    end,
    on_exit = function(client_id, code, signal)
      registry:on_exit(client_id, code, signal)
    end,
  })
  registry = require("tether.registry").new({
    daemon = daemon,
    attach = function(s)
      require("tether.chat").attach(s, function()
        registry:release(s)
      end)
      require("tether.review").attach(s)
    end,
  })
  app = registry
  return registry
end

--- The chat view of `s`.
---@param s tether.Session
---@return tether.ChatView
function M.chat(s)
  return assert(require("tether.chat").of(s), "a held session has a chat")
end

--- Forget every session (tests; the daemons must be stopped first).
function M.reset()
  if app then
    for _, s in pairs(vim.tbl_values(app.sessions)) do
      app:release(s)
    end
  end
end

return M
