--- Tether for Neovim: a coding agent in the editor, on the built-in LSP client.
---
--- `require("tether").setup(opts)` is optional where the plugin manager sources `plugin/`
--- (the commands work with the defaults) and cheap: it defines the commands and `<Plug>`
--- mappings if that has not happened yet, and stores the options; the daemon starts on the
--- first command that needs it.

local M = {}

---@param opts? tether.Options
function M.setup(opts)
  require("tether.plugin").load()
  require("tether.config").setup(opts)
end

--- Commands call this, so using Tether without `setup()` means using the defaults.
function M.ensure_setup()
  require("tether.config").ensure()
end

--- The current session of the current buffer's workspace, if one is running.
---@return tether.Session?
function M.session()
  M.ensure_setup()
  return require("tether.app").get():current_of(require("tether.daemon").root_for(0))
end

--- Send `text` as a prompt to the current workspace's session (started if needed).
---@param text string
---@param on_done? fun(err: lsp.ResponseError?, result: tether.PromptResult?)
function M.prompt(text, on_done)
  M.ensure_setup()
  local app = require("tether.app")
  app.get():with_session(require("tether.daemon").root_for(0), function(s)
    app.chat(s):show()
    s:prompt({ { type = "text", text = text } }, on_done)
  end)
end

--- Open the chat of the current workspace's session (started if needed).
---@param enter? boolean Move the cursor into it.
function M.open(enter)
  require("tether.commands").Tether({ bang = enter or false } --[[@as vim.api.keyset.create_user_command.command_args]])
end

return M
