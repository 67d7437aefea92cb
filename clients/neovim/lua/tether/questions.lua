--- Permission and plan questions, answered in the chat (a view of `chat.lua`).
---
--- A question is a block at the end of the chat that lists its answers with their keys
--- (`questions.keymaps`, buffer-local to the chat, behind documented `<Plug>` mappings).
--- Nothing opens, moves or reads keys elsewhere: typing in another window goes on as it
--- was. When no window shows the chat, a notification says that a question waits.
---
--- Rules that keep an answer deliberate:
--- - a key answers only a question that is on screen in the window the key was pressed in
---   (otherwise the cursor goes to it, and the next press answers);
--- - an "always" answer saves a rule: its key must be pressed twice, and the block shows
---   the exact rule in between;
--- - `vim.ui.select` is used only when the user asks (`<CR>` on the question,
---   `:TetherAnswer`, or `questions.select = true`); no key counts before the list has been
---   on screen for `questions.guard_ms` (keys typed before are discarded), and an "always"
---   choice is confirmed with a key ordinary typing cannot produce (`<C-y>`).

local cards = require("tether.cards")
local config = require("tether.config")
local log = require("tether.log")
local state = require("tether.state")

local M = {}

--- `<Plug>` names of the answer keys (`:help tether-question-keys`).
M.PLUGS = {
  allow = "allow",
  allow_edits = "allow-edits",
  reject = "reject",
  always_allow = "always-allow",
  always_reject = "always-reject",
  select = "select",
}

--- Map the question keys in the chat buffer (to the `<Plug>` mappings, so users can remap).
---@param chat tether.ChatView
function M.attach(chat)
  for action, lhs in pairs(config.options.questions.keymaps) do
    if lhs and M.PLUGS[action] then
      vim.keymap.set("n", lhs, ("<Plug>(tether-%s)"):format(M.PLUGS[action]), {
        buffer = chat.buf,
        remap = true,
        nowait = true,
        desc = "Tether: answer the question: " .. action:gsub("_", " "),
      })
    end
  end
end

--- The question the keys act on in `win`: the one under the cursor (its block, or the
--- card of the tool call it is about), else the oldest one still open.
---@param chat tether.ChatView
---@param win integer
---@return tether.QuestionState?
local function target(chat, win)
  local open = state.open_questions(chat.session.state)
  local item = chat:item_at_cursor(win)
  if item and item.kind == "question" and item.question.status == "open" then
    return item.question
  end
  for _, q in ipairs(open) do
    if item and item.key == "t:" .. q.toolCallId then
      return q
    end
  end
  return open[1]
end

--- The last row (1-based) of the block of `q`: where its answers (and an armed rule) are.
---@param chat tether.ChatView
---@param q tether.QuestionState
---@return integer?
local function answers_row(chat, q)
  local range = chat.text:range_of("q:" .. q.id)
  return range and range.row + range.size or nil
end

--- Are the answers of `q` on screen in `win`?
---@param chat tether.ChatView
---@param q tether.QuestionState
---@param win integer
---@return boolean
local function on_screen(chat, q, win)
  local row = answers_row(chat, q)
  return row ~= nil and row >= vim.fn.line("w0", win) and row <= vim.fn.line("w$", win)
end

--- A question key was pressed in the chat window `win`.
---@param chat tether.ChatView
---@param action string One of `M.PLUGS`' keys.
---@param win integer
function M.press(chat, action, win)
  local q = target(chat, win)
  if not q then
    return log.info("no question is waiting for an answer")
  end
  if not on_screen(chat, q, win) then
    local row = answers_row(chat, q)
    if row then
      vim.api.nvim_win_set_cursor(win, { row, 0 })
    end
    return log.info("here is the question; the key answers it now that it is in view")
  end
  if action == "select" then
    return M.select(chat, q)
  end
  local option = cards.option_for(q, action)
  if not option then
    return log.info("this question has no such answer (see its keys, or <CR> for a list)")
  end
  local s = chat.session
  if cards.is_always(option) and q.armed ~= option.optionId then
    s:dispatch({ type = "arm", id = q.id, optionId = option.optionId })
    return
  end
  if q.kind == "plan" and option.optionId == "plan_keep" then
    s:dispatch({ type = "wants_feedback", id = q.id, on = true })
    chat:show(true)
    return
  end
  s:answer(q.id, option.optionId)
end

--- Drop keys typed but not yet read: they were meant for what the user saw before.
function M.discard_typeahead()
  while vim.fn.getchar(0) ~= 0 do
  end
end

--- Questions a list is open for.
---@type table<string, true>
local asking = {}

---@param chat tether.ChatView
---@param q tether.QuestionState
---@return integer? float
local function open_preview(chat, q)
  local diff = require("tether.diff")
  local render = require("tether.render")
  local reserve = #q.options + 4 -- the built-in picker lists the options at the bottom
  if q.kind == "plan" then
    return diff.preview("Plan", render.lines(vim.trim(q.plan or "")), "markdown", reserve)
  end
  if not config.options.questions.preview then
    return nil
  end
  local root = chat.session.root
  return diff.open(render.relative(q.title, root), q.content, root, reserve)
end

---@param q tether.QuestionState
---@param root string
---@return string
function M.prompt_line(q, root)
  if q.kind == "plan" then
    return "Tether's plan is ready (shown above). Start it?"
  end
  local text = "Tether wants to: " .. require("tether.render").relative(q.title, root)
  local command = q.rawInput.command
  if type(command) == "string" then
    text = text .. " — $ " .. command
  end
  return (text:gsub("\n", " ⏎ "))
end

--- An option as the list shows it: an "always" answer names the exact rule it saves.
---@param option tether.PermissionOption
---@return string
function M.label(option)
  if option.rule and not option.name:find(option.rule, 1, true) then
    return ("%s — saves the rule %s"):format(option.name, option.rule)
  end
  return option.name
end

--- Is `vim.ui.select` Neovim's own (`inputlist()`, which draws the list and reads its keys
--- in one call), not a picker plugin's?
---@return boolean
local function builtin_select()
  local info = debug.getinfo(vim.ui.select, "S")
  return info ~= nil and info.source:find("vim/ui.lua", 1, true) ~= nil
end

--- Show `lines` where the built-in list draws itself (the message area) and let no key
--- count until they have been on screen for `questions.guard_ms`: keys typed before they
--- were drawn, and during the guard, are dropped. The mode the user typed in is kept.
---@param lines string[]
function M.guard(lines)
  local chunks = {}
  for i, line in ipairs(lines) do
    chunks[#chunks + 1] = { line .. (i < #lines and "\n" or "") }
  end
  vim.api.nvim_echo(chunks, false, {})
  vim.cmd.redraw()
  M.discard_typeahead()
  local ms = config.options.questions.guard_ms
  if ms > 0 then
    vim.wait(ms, function()
      M.discard_typeahead()
      return false
    end, 10)
  end
  M.discard_typeahead()
end

--- `vim.ui.select` behind the guard: the list is drawn and stays `guard_ms` before a key
--- counts. A picker plugin draws its own window after the guard; an answer it gives within
--- `guard_ms` of opening was typed before the user could see it, and the list is asked again.
---@param items any[]
---@param opts table
---@param on_choice fun(choice: any?)
function M.guarded_select(items, opts, on_choice)
  local lines = { opts.prompt }
  for i, item in ipairs(items) do
    lines[#lines + 1] = ("%d: %s"):format(i, opts.format_item and opts.format_item(item) or tostring(item))
  end
  M.guard(lines)
  local builtin = builtin_select()
  local opened = vim.uv.hrtime()
  vim.ui.select(items, opts, function(choice)
    -- Scheduled: pickers may answer from a fast event, where windows cannot be touched.
    vim.schedule(function()
      local ms = (vim.uv.hrtime() - opened) / 1e6
      if choice and not builtin and ms < config.options.questions.guard_ms then
        log.info("an answer came before the list was seen; asked again")
        return M.guarded_select(items, opts, on_choice)
      end
      on_choice(choice)
    end)
  end)
end

--- The key that saves a rule: ordinary typing never produces it.
M.CONFIRM_KEY = "<C-y>"

--- Ask whether to save `rule`: one key after the guard; only `M.CONFIRM_KEY` says yes (no
--- list, so neither a digit, Enter, nor a picker's first entry can save a rule).
---@param rule string
---@return boolean
function M.confirm_rule(rule)
  M.guard({
    ("Save the rule %s for this workspace?"):format(rule),
    ("%s saves it; any other key goes back to the question."):format(M.CONFIRM_KEY),
  })
  local ok, key = pcall(vim.fn.getcharstr)
  vim.api.nvim_echo({ { "" } }, false, {})
  return ok and key == vim.keycode(M.CONFIRM_KEY)
end

--- Ask `q` with `vim.ui.select` (whatever picker the user has), behind the guard.
---@param chat tether.ChatView
---@param q tether.QuestionState
function M.select(chat, q)
  if asking[q.id] then
    return
  end
  asking[q.id] = true
  local s = chat.session
  local float = open_preview(chat, q)
  local function done()
    asking[q.id] = nil
    require("tether.diff").close(float)
  end
  M.guarded_select(q.options, {
    prompt = M.prompt_line(q, s.root),
    kind = q.kind == "plan" and "tether.plan" or "tether.permission",
    format_item = M.label,
  }, function(choice)
    if not choice or not s:question(q.id) then
      return done() -- dismissed: the question stays open in the chat
    end
    if cards.is_always(choice) then
      local yes = M.confirm_rule(choice.rule or choice.name)
      done()
      if yes and s:question(q.id) then
        s:answer(q.id, choice.optionId)
      else
        log.info("no rule saved; the question still waits in the chat")
      end
      return
    end
    if q.kind == "plan" and choice.optionId == "plan_keep" then
      return vim.ui.input({ prompt = "What should change in the plan? " }, function(text)
        vim.schedule(function()
          done()
          if text then
            s:answer(q.id, choice.optionId, text)
          end
        end)
      end)
    end
    done()
    s:answer(q.id, choice.optionId)
  end)
end

--- After each change of the chat's session: a new question is announced when no window
--- shows the chat, and asked with a list when the user chose that.
---@param chat tether.ChatView
---@param action tether.Action
function M.on_change(chat, action)
  if action.type ~= "question" then
    return
  end
  local q = action.question
  local opts = config.options.questions
  if opts.select then
    vim.schedule(function()
      if chat.session:question(q.id) then
        M.select(chat, q)
      end
    end)
    return
  end
  local visible = false
  for _, win in ipairs(chat:windows()) do
    if vim.api.nvim_win_get_tabpage(win) == vim.api.nvim_get_current_tabpage() then
      visible = true
    end
  end
  if not visible and opts.notify then
    local render = require("tether.render")
    local what = q.kind == "plan" and "the plan is ready" or render.relative(q.title, chat.session.root)
    log.warn(("a question waits in the chat: %s (:Tether shows it)"):format((what:gsub("\n", " "))))
  end
end

return M
