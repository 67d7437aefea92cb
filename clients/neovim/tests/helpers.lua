--- Test support: fresh workspaces, scripted models, bounded waits, `vim.ui.select` stubs.
--- Every spec runs the real daemon (`tether serve`, from PATH or $TETHER_CMD) over stdio.

local H = {}

H.here = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p"))
H.fixture = H.here .. "/fixtures/ws"

--- Wait until `pred()` is true; fail the test after `ms` milliseconds.
---@param ms integer
---@param pred fun(): any
---@param what string what we were waiting for, for the failure message
function H.wait(ms, pred, what)
  if not vim.wait(ms, pred, 10) then
    error(("timed out after %d ms waiting for %s"):format(ms, what), 2)
  end
end

---@param path string
---@return string
function H.read(path)
  local fd = assert(io.open(path, "r"))
  local text = fd:read("*a")
  fd:close()
  return text
end

---@param path string
---@param text string
function H.write(path, text)
  local fd = assert(io.open(path, "w"))
  fd:write(text)
  fd:close()
end

--- A fresh copy of the fixture workspace (or `dir`, filled on first use, for tests that span
--- two Neovim processes); the current directory moves into it.
---@param dir? string
---@return string root (real path)
function H.workspace(dir)
  H._t0 = vim.uv.hrtime()
  dir = dir or vim.fn.tempname()
  if not vim.uv.fs_stat(dir) then
    vim.fn.mkdir(dir, "p")
    local out = vim.system({ "cp", "-R", H.fixture .. "/.", dir }):wait()
    assert(out.code == 0, out.stderr)
  end
  local root = assert(vim.uv.fs_realpath(dir))
  vim.fn.chdir(root)
  return root
end

--- Write a model script (providers/script.py format) next to the workspace, not inside it.
---@param root string
---@param turns table
---@param name? string file name suffix, when one workspace needs several scripts
---@return string model spec
function H.script(root, turns, name)
  local path = ("%s.%s.json"):format(root, name or "script")
  H.write(path, vim.json.encode(turns))
  return "scripted:" .. path
end

--- `setup()` for a test: the given model, optional overrides.
---@param model string
---@param opts? table
function H.setup(model, opts)
  local cmd = vim.env.TETHER_CMD and vim.split(vim.env.TETHER_CMD, " ", { trimempty = true }) or nil
  require("tether").setup(vim.tbl_deep_extend("force", { model = model, cmd = cmd }, opts or {}))
end

---@param text string
---@return table
function H.say(text)
  return { type = "text", text = text }
end

---@param name string
---@param input table
---@return table
function H.tool(name, input)
  return { type = "tool_use", name = name, input = input }
end

--- The plugin's session registry.
---@return tether.Registry
function H.registry()
  return require("tether.app").get()
end

--- The chat view of session `s`.
---@param s tether.Session
---@return tether.ChatView
function H.chat(s)
  return require("tether.app").chat(s)
end

--- The current session of the current workspace, started (and waited for) if needed.
---@return tether.Session
function H.session()
  local root = require("tether.daemon").root_for(0)
  local found
  H.registry():with_session(root, function(s)
    found = s
  end)
  -- Generous: on a loaded CI machine Python's start-up alone can take seconds.
  H.wait(30000, function()
    return found
  end, "the daemon and a session to start")
  return found
end

--- Send a prompt and wait for its answer.
---@param s tether.Session
---@param text string
---@param ms? integer
---@return tether.PromptResult
function H.prompt(s, text, ms)
  local done, err, result = false, nil, nil
  H.send(s, text, function(e, r)
    done, err, result = true, e, r
  end)
  H.wait(ms or 15000, function()
    return done
  end, "the prompt to finish")
  assert(not err, err and err.message)
  return result
end

--- Send a prompt (with the chat shown, as the commands do); `cb(err, result)` at its end.
---@param s tether.Session
---@param text string
---@param cb? fun(err: lsp.ResponseError?, result: tether.PromptResult?)
function H.send(s, text, cb)
  H.chat(s):show()
  s:prompt({ { type = "text", text = text } }, cb)
end

--- Replace `vim.ui.select` with `answer(items, opts)` (its return value is the choice, or
--- a function to call later, which makes the answer asynchronous). Returns the calls made.
---@param answer fun(items: any[], opts: table): any
---@return {items: any[], opts: table}[]
function H.stub_select(answer)
  local calls = {}
  H._select = H._select or vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    calls[#calls + 1] = { items = items, opts = opts }
    local choice = answer(items, opts)
    if type(choice) == "function" then
      vim.defer_fn(function()
        on_choice(choice())
      end, 20)
    else
      on_choice(choice)
    end
  end
  return calls
end

--- The item of a list whose field `key` equals `value`.
---@param items table[]
---@param key string
---@param value any
---@return table?
function H.find(items, key, value)
  for _, item in ipairs(items) do
    if item[key] == value then
      return item
    end
  end
end

--- Stop every Tether client and forget the plugin's sessions, so the next test starts clean.
function H.reset()
  -- TETHER_TEST_TIMING=1 prints how long each test took (from H.workspace() on).
  if vim.env.TETHER_TEST_TIMING and H._t0 then
    print(("\n[%.0f ms]"):format((vim.uv.hrtime() - H._t0) / 1e6))
  end
  if H._select then
    vim.ui.select = H._select
  end
  -- Terminate: a daemon stopped right after it started lingers for seconds (its warm-up
  -- import thread), and Neovim waits for its children when it quits. The graceful stop on
  -- quit is what sessions_first_spec.lua tests.
  local clients = vim.lsp.get_clients({ name = "tether" })
  for _, c in ipairs(clients) do
    c:stop(true)
  end
  H.wait(5000, function()
    return #vim.lsp.get_clients({ name = "tether" }) == 0
  end, "the clients to stop")
  require("tether.app").reset()
  require("tether.history").reset()
  vim.cmd("silent! %bwipeout!")
end

--- The screen as text (what a terminal would show), saved as `<name>.txt` in
--- $TETHER_SCREEN_DIR (a test artifact) when that is set.
---@param name string
---@return string[] rows
function H.screen(name)
  vim.cmd.redraw({ bang = true })
  local rows = {}
  for r = 1, vim.o.lines do
    local cells = {}
    for c = 1, vim.o.columns do
      cells[#cells + 1] = vim.fn.screenstring(r, c)
    end
    rows[#rows + 1] = table.concat(cells)
  end
  local dir = vim.env.TETHER_SCREEN_DIR
  if dir and dir ~= "" then
    vim.fn.mkdir(dir, "p")
    H.write(("%s/%s.txt"):format(dir, name), table.concat(rows, "\n") .. "\n")
  end
  return rows
end

--- Text of the buffer `buf`.
---@param buf integer
---@return string
function H.text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

return H
