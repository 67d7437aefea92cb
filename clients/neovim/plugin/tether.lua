-- Commands only; everything else loads on first use (`require("tether.commands")`).
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

command("Tether", { bang = true, desc = "open the chat (! also moves the cursor into it)" })
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
