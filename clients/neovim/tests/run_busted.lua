-- Runs busted specs inside Neovim: `nvim --headless --clean -l tests/run_busted.lua [busted args] spec...`
-- Busted comes from Debian's lua-busted (Lua 5.1 modules, which LuaJIT loads as they are).
local here = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p"))
local plugin_root = vim.fs.dirname(here)

local lua_dir = vim.env.TETHER_BUSTED_LUA or "/usr/share/lua/5.1"
if not vim.uv.fs_stat(lua_dir .. "/busted/runner.lua") then
  io.stderr:write("busted not found in " .. lua_dir .. " (install lua-busted, or set TETHER_BUSTED_LUA)\n")
  os.exit(2)
end
package.path = table.concat({
  here .. "/?.lua",
  lua_dir .. "/?.lua",
  lua_dir .. "/?/init.lua",
  package.path,
}, ";")
-- C modules (lua-term, lua-system) live in the multiarch directory.
for _, dir in ipairs(vim.fn.glob("/usr/lib/*/lua/5.1", false, true)) do
  package.cpath = dir .. "/?.so;" .. package.cpath
end

-- Opening a .py file probes the Python provider, which costs seconds behind a pyenv shim.
vim.g.loaded_python3_provider = 0

-- The plugin as a user installs it: on the runtimepath, with its plugin/ file sourced.
vim.opt.runtimepath:prepend(plugin_root)
vim.cmd.runtime("plugin/tether.lua")

require("busted.runner")({ standalone = false })
