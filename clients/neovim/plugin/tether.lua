-- Commands and <Plug> mappings only (see lua/tether/plugin.lua); everything else loads on first use.
require("tether.plugin").load()
