-- Tether in headless Neovim with no plugin: only the configuration of docs/editors.md.
-- Run by tests/editors/test_neovim_plain.py as
--   nvim --headless --clean -l plain_flow.lua <init.lua from the docs> <workspace>
-- against the real daemon and the fake Messages API. Prints "ok - <step>" per step done;
-- any failure is a Lua error (exit code 1) naming what was awaited.

local init, root = arg[1], arg[2]
local app = root .. '/src/app.py'

local function wait(ms, pred, what)
  if not vim.wait(ms, pred, 20) then
    error(('timed out after %d ms waiting for %s'):format(ms, what), 2)
  end
end

local function ok(step)
  io.stdout:write('ok - ' .. step .. '\n')
end

local function read(path)
  local fd = assert(io.open(path, 'r'))
  local text = fd:read('*a')
  fd:close()
  return text
end

local function buffer_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n') .. '\n'
end

-- What the user sees: messages (recorded on their way to Neovim's own handler), progress
-- (LspProgress), and the menus (vim.ui.select) they answer.
local notes, progress, menus, answers = {}, {}, {}, {}
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
  table.insert(notes, { msg = params.message, level = params.type })
  return show_message(err, params, ctx)
end
vim.api.nvim_create_autocmd('LspProgress', {
  callback = function(ev)
    table.insert(progress, vim.deepcopy(ev.data.params.value))
  end,
})
vim.ui.select = function(items, opts, on_choice)
  local wanted = table.remove(answers, 1)
  local shown = {}
  for i, item in ipairs(items) do
    shown[i] = opts.format_item and opts.format_item(item) or tostring(item)
  end
  table.insert(menus, { prompt = opts.prompt, items = shown })
  for i, text in ipairs(shown) do
    if wanted and text:find(wanted, 1, true) then
      return on_choice(items[i], i)
    end
  end
  error(('menu %q has no %q: %s'):format(opts.prompt, tostring(wanted), table.concat(shown, ' | ')))
end

local function note(pattern)
  for _, n in ipairs(notes) do
    if n.msg:find(pattern, 1, true) then
      return n
    end
  end
end

local function wait_note(pattern, ms)
  wait(ms or 60000, function()
    return note(pattern)
  end, ('a message with %q (seen: %s)'):format(pattern, vim.inspect(notes)))
  return note(pattern)
end

-- The documented configuration, and nothing of clients/neovim.
dofile(init)
assert(#vim.api.nvim_get_runtime_file('lua/tether/init.lua', true) == 0, 'the plugin is on the rtp')
local actions = vim.fn.maparg('<leader>a', 'n', false, true).callback

vim.cmd.edit(app)
local buf = vim.api.nvim_get_current_buf()
wait(30000, function()
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'tether' })[1]
  return client and client.initialized
end, 'the tether client to attach')
ok('vim.lsp.enable started tether serve for the buffer')

-- 1. "Tether: fix this" on another linter's diagnostic, next to unsaved text.
vim.api.nvim_buf_set_lines(buf, 0, 0, false, { '# an unsaved note' })
local linter = vim.api.nvim_create_namespace('a-linter')
vim.diagnostic.set(linter, buf, {
  {
    lnum = 2,
    col = 11,
    end_col = 16,
    severity = vim.diagnostic.severity.ERROR,
    message = "undefined name 'Hello'",
    source = 'pyflakes',
  },
})
vim.api.nvim_win_set_cursor(0, { 3, 11 })
answers = { 'Tether: fix this', 'Allow once' }
actions()
wait(60000, function()
  return buffer_text(buf):find('return "Hi, " + name', 1, true) ~= nil
end, 'the edit to land in the buffer')
assert(menus[1].prompt == 'Code actions:', vim.inspect(menus))
assert(menus[2].prompt:find('Tether wants to Edit', 1, true), vim.inspect(menus))
local done = wait_note('1 file changed')
assert(done.msg == 'Tether: fixed greet() in app.py — 1 file changed', done.msg)
local text = buffer_text(buf)
assert(text:sub(1, 18) == '# an unsaved note\n', text)
assert(read(app) == text, 'disk and buffer differ:\n' .. read(app) .. '\n---\n' .. text)
ok('fix this: the permission question, the edit beside unsaved text, buffer and disk agree')

local steps = {}
for _, value in ipairs(progress) do
  -- Neovim copies the begin's title into every later value of the token.
  local text = value.kind == 'begin' and value.title or value.message
  table.insert(steps, value.kind .. ':' .. (text or ''))
end
local expected = {
  "begin:Tether: fix undefined name 'Hello'",
  'report:Reading app.py',
  'report:Editing app.py',
  'end:Done',
}
assert(vim.deep_equal(steps, expected), vim.inspect(steps))
ok('$/progress reported the task and its steps')

local shown = vim.tbl_filter(function(b)
  return vim.api.nvim_buf_get_name(b):match('/conversations/[^/]+%.md$') ~= nil
end, vim.api.nvim_list_bufs())
assert(#shown == 1, 'the conversation was not opened')
assert(vim.api.nvim_get_current_buf() == buf, 'showDocument took the focus')
ok('the conversation opened beside the code without taking focus')

-- 2. An instruction comment, carried out and removed.
vim.api.nvim_buf_set_lines(buf, 5, 5, false, { '# tether: say Ciao in farewell' })
vim.api.nvim_win_set_cursor(0, { 6, 0 })
answers = { 'Tether: do this', 'Allow once' }
notes = {}
actions()
wait(60000, function()
  return buffer_text(buf):find('"Ciao, "', 1, true) ~= nil
end, 'the instruction to be carried out')
wait_note('1 file changed')
assert(not buffer_text(buf):find('tether:', 1, true), buffer_text(buf))
assert(read(app) == buffer_text(buf), 'disk and buffer differ after the instruction')
ok('an instruction comment was carried out and removed')

-- 3. tether.cancel stops a long turn.
notes, progress = {}, {}
vim.cmd('Tether tell me a long story')
wait(30000, function()
  for _, value in ipairs(progress) do
    if value.kind == 'begin' then
      return true
    end
  end
end, 'the long turn to begin')
vim.cmd('TetherStop')
local stopped = wait_note('stopped', 30000)
assert(stopped.level == vim.lsp.protocol.MessageType.Warning, vim.inspect(stopped))
assert(progress[#progress].kind == 'end' and progress[#progress].message == 'Stopped')
ok('tether.cancel stopped a long turn')

vim.cmd('qall!')
