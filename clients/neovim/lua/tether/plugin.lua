--- The commands and `<Plug>` mappings, nothing else (everything loads on first use, in
--- `tether.commands`). `plugin/tether.lua` calls `load()`, and so does `setup()`: plugin
--- managers that put this folder on 'runtimepath' after Neovim sourced the `plugin/` files
--- (lazy.nvim from a spec's `init`, packer's `rtp`) never source ours.

local M = {}

--- Define the commands and mappings, once (later calls do nothing).
function M.load()
  if vim.g.loaded_tether then
    return
  end
  vim.g.loaded_tether = true
  if vim.fn.has("nvim-0.11") == 0 then
    vim.notify_once("tether: needs Neovim 0.11 or newer", vim.log.levels.WARN)
    return
  end

  local function command(name, opts)
    opts.desc = "Tether: " .. opts.desc
    vim.api.nvim_create_user_command(name, function(args)
      require("tether.commands")[name](args)
    end, opts)
  end

  command("Tether", { bang = true, desc = "open the chat (! also moves the cursor to its prompt area)" })
  command("TetherPrompt", { nargs = "*", desc = "send a prompt (asks for one without arguments)" })
  command("TetherAddSelection", { range = true, desc = "attach the selection to the next prompt" })
  command("TetherCancel", { desc = "cancel the running turn" })
  command("TetherSessions", { desc = "pick an earlier session and resume it" })
  command("TetherMode", {
    nargs = "?",
    desc = "set the permission mode",
    complete = function()
      return require("tether.config").modes
    end,
  })
  command("TetherRewind", { desc = "undo a turn: files and conversation" })
  command("TetherTasks", { desc = "list background tasks" })
  command("TetherReview", { desc = "list the pending changes of the session's turns (quickfix)" })
  command("TetherAnswer", { desc = "answer the waiting question from a list (vim.ui.select)" })
  command("TetherRestart", { desc = "restart the daemon (new environment) and continue the session" })
  command("TetherInstall", { bang = true, desc = "install the daemon with uv or pipx (! waits for it)" })

  -- <Plug>(tether-…): one per command, for users' own keys (see :help tether-mappings).
  local plugs = {
    ["open"] = "Tether",
    ["focus"] = "Tether!",
    ["prompt"] = "TetherPrompt",
    ["add-selection"] = "TetherAddSelection",
    ["cancel"] = "TetherCancel",
    ["sessions"] = "TetherSessions",
    ["mode"] = "TetherMode",
    ["rewind"] = "TetherRewind",
    ["tasks"] = "TetherTasks",
    ["answer"] = "TetherAnswer",
    ["restart"] = "TetherRestart",
    ["review"] = "TetherReview",
    ["install"] = "TetherInstall",
  }
  for name, cmd in pairs(plugs) do
    vim.keymap.set("n", ("<Plug>(tether-%s)"):format(name), ("<Cmd>%s<CR>"):format(cmd), { desc = "Tether: " .. cmd })
  end
  -- Answers to the question in the chat (mapped there to ga, gA, gr, gR, ge, g?; see
  -- :help tether-question-keys). They act only in the chat, on a question in view.
  for action, plug in pairs({
    allow = "allow",
    allow_edits = "allow-edits",
    reject = "reject",
    always_allow = "always-allow",
    always_reject = "always-reject",
    select = "select",
  }) do
    vim.keymap.set("n", ("<Plug>(tether-%s)"):format(plug), function()
      require("tether.config").ensure()
      require("tether.commands").question_key(action)
    end, { desc = "Tether: answer the question: " .. action:gsub("_", " ") })
  end
  -- Reviewing changed hunks (mapped to ]h, [h, \k, \u, \K, \U in buffers that have them,
  -- and in the review list; see :help tether-review).
  for _, action in ipairs({ "next_hunk", "prev_hunk", "keep_hunk", "undo_hunk", "keep_file", "undo_file" }) do
    vim.keymap.set("n", ("<Plug>(tether-%s)"):format(action:gsub("_", "-")), function()
      require("tether.commands").review_key(action)
    end, { desc = "Tether: " .. action:gsub("_", " ") })
  end
  -- In visual mode the selection itself, exactly as selected (characters with `v`).
  vim.keymap.set("x", "<Plug>(tether-add-selection)", function()
    require("tether.config").ensure()
    require("tether.commands").add_visual()
  end, { desc = "Tether: attach the selection to the next prompt" })
end

return M
