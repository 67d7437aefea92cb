-- Reviewing a turn's changes in headless Neovim with no plugin: only the configuration of
-- docs/editors.md and Neovim's own code action menu. Run by tests/editors/test_neovim_plain.py
-- as  nvim --headless --clean -l review_flow.lua <init.lua from the docs> <workspace>
-- Prints "ok - <step>" per step done; any failure is a Lua error naming what was awaited.

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

local function has(buf, text)
  return buffer_text(buf):find(text, 1, true) ~= nil
end

local notes, menus, answers = {}, {}, {}
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
  table.insert(notes, { msg = params.message, level = params.type })
  return show_message(err, params, ctx)
end
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

local function wait_note(pattern)
  local found
  wait(60000, function()
    for _, n in ipairs(notes) do
      if n.msg:find(pattern, 1, true) then
        found = n
        return true
      end
    end
  end, ('a message with %q (seen: %s)'):format(pattern, vim.inspect(notes)))
  return found
end

local function cursor_on(buf, text)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if line:find(text, 1, true) then
      return vim.api.nvim_win_set_cursor(0, { i, 4 })
    end
  end
  error(('no line with %q:\n%s'):format(text, buffer_text(buf)))
end

local function menu_has(menu, title)
  return vim.tbl_contains(menu.items, title)
end

dofile(init)
assert(#vim.api.nvim_get_runtime_file('lua/tether/init.lua', true) == 0, 'the plugin is on the rtp')
local actions = vim.fn.maparg('<leader>a', 'n', false, true).callback

vim.cmd.edit(app)
local buf = vim.api.nvim_get_current_buf()
wait(30000, function()
  local client = vim.lsp.get_clients({ bufnr = buf, name = 'tether' })[1]
  return client and client.initialized
end, 'the tether client to attach')

-- 1. A turn changes two places of app.py (one edit, two hunks).
answers = { 'Allow once' }
vim.cmd('Tether greet more briefly')
wait(60000, function()
  return has(buf, '"Hi, "') and has(buf, '"Ciao, "')
end, 'the edit to land in the buffer')
wait_note('1 file changed')
ok('a turn changed two places of app.py')

-- 2. "Tether: undo this change" on the farewell: only that hunk goes back.
cursor_on(buf, '"Ciao, "')
menus, notes, answers = {}, {}, { 'Tether: undo this change' }
actions()
wait(30000, function()
  return has(buf, '"Bye, "')
end, 'the farewell to be undone')
wait_note('undid 1 change in app.py')
local menu = menus[1]
assert(menu.prompt == 'Code actions:', vim.inspect(menus))
for _, title in ipairs({
  'Tether: keep this change',
  'Tether: undo this change',
  'Tether: keep all changes in this file',
  'Tether: undo all changes in this file',
}) do
  assert(menu_has(menu, title), ('%q not offered: %s'):format(title, vim.inspect(menu.items)))
end
assert(has(buf, '"Hi, "'), 'the other hunk was undone too:\n' .. buffer_text(buf))
assert(read(app) == buffer_text(buf), 'disk and buffer differ:\n' .. read(app))
ok('undo this change: that hunk only, buffer and disk agree')

-- 3. Neovim's own undo takes it back.
vim.cmd('silent undo')
assert(has(buf, '"Ciao, "') and has(buf, '"Hi, "'), buffer_text(buf))
ok('u brings the undone change back')

-- 4. "Tether: keep all changes in this file": the change brought back is pending again.
cursor_on(buf, '"Hi, "')
menus, notes, answers = {}, {}, { 'Tether: keep all changes in this file' }
actions()
wait_note('kept 2 changes in app.py')
ok('keep all changes in this file')

-- 5. A kept change can still be undone, and is not offered to be kept again.
cursor_on(buf, '"Hi, "')
menus, notes, answers = {}, {}, { 'Tether: undo this change' }
actions()
wait(30000, function()
  return has(buf, '"Hello, "')
end, 'the greeting to be undone')
wait_note('undid 1 change in app.py')
assert(not menu_has(menus[1], 'Tether: keep this change'), vim.inspect(menus[1].items))
assert(not menu_has(menus[1], 'Tether: keep all changes in this file'), vim.inspect(menus[1]))
assert(has(buf, '"Ciao, "'), buffer_text(buf))
ok('a kept change is undone on request; keeping is not offered again')

vim.cmd('qall!')
