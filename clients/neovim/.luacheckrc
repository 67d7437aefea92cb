-- luacheck settings (tests/clients/test_neovim.py runs it).
std = "luajit"
globals = { "vim" }
max_line_length = 120
files["tests"] = { std = "+busted" }
