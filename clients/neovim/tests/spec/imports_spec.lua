-- The plugin's modules form layers: no module requires (even lazily, inside a function) one
-- that requires it back, and the pure ones (state, formatting) touch no views or RPC.
local H = require("helpers")

local LUA = H.here .. "/../lua/tether"

--- Every `require("tether.x")` of each module, lazy ones included.
---@return table<string, string[]>
local function graph()
  local out = {}
  for name, kind in vim.fs.dir(LUA) do
    if kind == "file" and name:match("%.lua$") then
      local module = "tether." .. name:gsub("%.lua$", "")
      local deps, seen = {}, {}
      local code = H.read(LUA .. "/" .. name):gsub("%-%-[^\n]*", "") -- comments name modules too
      for dep in code:gmatch([[require%(?%s*["'](tether[%w%._]*)["']%s*%)?]]) do
        if dep ~= module and not seen[dep] then
          seen[dep] = true
          deps[#deps + 1] = dep
        end
      end
      table.sort(deps)
      out[module] = deps
    end
  end
  out.tether = out["tether.init"]
  return out
end

--- The cycles of `g`, each as the path that closes it.
local function cycles(g)
  local found, state, stack = {}, {}, {}
  local function visit(node)
    state[node] = "open"
    stack[#stack + 1] = node
    for _, dep in ipairs(g[node] or {}) do
      if state[dep] == "open" then
        local from = 1
        for i, n in ipairs(stack) do
          if n == dep then
            from = i
          end
        end
        found[#found + 1] = table.concat(vim.list_slice(stack, from), " -> ") .. " -> " .. dep
      elseif not state[dep] then
        visit(dep)
      end
    end
    stack[#stack] = nil
    state[node] = "done"
  end
  local nodes = vim.tbl_keys(g)
  table.sort(nodes)
  for _, node in ipairs(nodes) do
    if not state[node] then
      visit(node)
    end
  end
  return found
end

--- Everything `module` reaches.
local function reach(g, module)
  local seen, todo = {}, { module }
  while #todo > 0 do
    local node = table.remove(todo)
    for _, dep in ipairs(g[node] or {}) do
      if not seen[dep] then
        seen[dep] = true
        todo[#todo + 1] = dep
      end
    end
  end
  return seen
end

describe("module layers", function()
  it("have no import cycles, lazy requires included", function()
    local g = graph()
    assert.is_true(#vim.tbl_keys(g) > 20, "the modules were found")
    assert.same({}, cycles(g))
  end)

  it("keep state and formatting pure, and the RPC layer free of views", function()
    local g = graph()
    local pure = {
      "tether.state",
      "tether.state_items",
      "tether.state_updates",
      "tether.render",
      "tether.cards",
      "tether.status",
    }
    for _, module in ipairs(pure) do
      for dep in pairs(reach(g, module)) do
        assert.is_true(vim.tbl_contains(pure, dep), ("%s reaches %s"):format(module, dep))
      end
    end
    local views =
      { "tether.chat", "tether.layout", "tether.questions", "tether.input", "tether.app", "tether.commands" }
    for _, module in ipairs({ "tether.daemon", "tether.session", "tether.registry" }) do
      local reached = reach(g, module)
      for _, view in ipairs(views) do
        assert.is_nil(reached[view], ("%s reaches the view %s"):format(module, view))
      end
    end
  end)

  it("find a cycle when there is one (the check can fail)", function()
    assert.same({ "a -> b -> a" }, cycles({ a = { "b" }, b = { "a" } }))
  end)
end)
