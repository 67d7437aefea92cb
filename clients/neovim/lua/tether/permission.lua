--- `tether/requestPermission`: the daemon asks before a tool runs (or before a plan is
--- carried out); the user answers through `vim.ui.select`, so telescope, fzf-lua, snacks or
--- the built-in list shows the question.
---
--- A dismissed picker is not an answer. The question stays open: its card in the chat says
--- so, the winbar says so, and `:TetherAnswer` (or `<CR>` on the card) asks again. The
--- daemon withdraws a question when its turn ends (cancelled), and so does the plugin.
---
--- Neovim runs server requests inside a coroutine, which lets the handler wait for as long
--- as the question is open and still return the answer as its result.

local config = require("tether.config")
local diff = require("tether.diff")
local render = require("tether.render")

local M = {}

---@class tether.Question
---@field params tether.PermissionParams
---@field session? tether.Session
---@field title string
---@field tool_call_id string
---@field asking boolean A picker shows it now.
---@field done boolean Answered or withdrawn.
---@field suspended boolean The handler waits for it.
---@field result? table
---@field preview? integer The diff or plan float.
---@field resume fun()

--- The line the picker shows above the choices.
---@param params tether.PermissionParams
---@param root? string
---@return string
function M.question(params, root)
  if params.kind == "plan" then
    return "Tether's plan is ready (shown above). Start it?"
  end
  local tool = params.toolCall
  local text = "Tether wants to: " .. render.relative(tool.title, root)
  local command = tool.rawInput and tool.rawInput.command
  if type(command) == "string" then
    text = text .. " — $ " .. command
  end
  return (text:gsub("\n", " ⏎ "))
end

--- An option as the picker shows it: an "always" answer names the exact rule it saves.
---@param option tether.PermissionOption
---@return string
function M.label(option)
  if option.rule and not option.name:find(option.rule, 1, true) then
    return ("%s — saves the rule %s"):format(option.name, option.rule)
  end
  return option.name
end

---@param q tether.Question
local function close_preview(q)
  diff.close(q.preview)
  q.preview = nil
end

---@param q tether.Question
---@return integer?
local function open_preview(q)
  local params = q.params
  local root = q.session and q.session.root
  local reserve = #params.options + 4 -- the built-in picker lists the options at the bottom
  if params.kind == "plan" then
    local plan = params.plan or (params.toolCall.rawInput or {}).plan or ""
    return diff.preview("Plan", render.lines(vim.trim(plan)), "markdown", reserve)
  end
  if not config.options.permissions.preview_diff then
    return nil
  end
  return diff.open(render.relative(params.toolCall.title, root), params.toolCall.content, root, reserve)
end

--- Stop waiting: answered (`result`) or withdrawn (nil: nothing is sent back).
---@param q tether.Question
---@param result? table
local function finish(q, result)
  if q.done then
    return
  end
  q.done, q.result = true, result
  close_preview(q)
  local s = q.session
  if s then
    for i, other in ipairs(s.questions) do
      if other == q then
        table.remove(s.questions, i)
        break
      end
    end
    s.chat:set_waiting(q.tool_call_id, false)
  end
  if result and q.suspended then
    q.suspended = false
    q.resume()
  end
end

---@param option tether.PermissionOption
---@param feedback? string
---@return table
local function selected(option, feedback)
  local outcome = { outcome = "selected", optionId = option.optionId }
  if feedback and vim.trim(feedback) ~= "" then
    outcome.feedback = vim.trim(feedback)
  end
  return { outcome = outcome }
end

--- Show the question (again). Its answer finishes it; a dismissal leaves it open.
---@param q tether.Question
function M.ask(q)
  if q.asking or q.done then
    return
  end
  q.asking = true
  q.preview = open_preview(q)
  -- The built-in picker blocks in `inputlist()` without redrawing first: draw the chat's
  -- waiting state and the preview now, so the user sees what they approve.
  vim.cmd.redraw()
  vim.ui.select(q.params.options, {
    prompt = M.question(q.params, q.session and q.session.root),
    kind = q.params.kind == "plan" and "tether.plan" or "tether.permission",
    format_item = M.label,
  }, function(choice)
    -- Scheduled: pickers may answer from a fast event, where windows cannot be touched.
    vim.schedule(function()
      q.asking = false
      close_preview(q)
      if q.done then
        return
      end
      if not choice then
        require("tether.log").info("the question stays open: :TetherAnswer (or <CR> on its card) answers it")
        return
      end
      if q.params.kind == "plan" and choice.optionId == "plan_keep" then
        vim.ui.input({ prompt = "What should change in the plan? " }, function(text)
          vim.schedule(function()
            finish(q, selected(choice, text))
          end)
        end)
        return
      end
      finish(q, selected(choice))
    end)
  end)
end

---@param params tether.PermissionParams
---@return table
function M.handle(params, _)
  local co, is_main = coroutine.running()
  local s = require("tether.session").sessions[params.sessionId]
  ---@type tether.Question
  local q = {
    params = params,
    session = s,
    title = params.toolCall.title,
    tool_call_id = params.toolCall.toolCallId,
    asking = false,
    done = false,
    suspended = false,
    resume = function()
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end,
  }
  if not co or is_main then
    error("tether: a permission question can only be answered inside a server request")
  end
  if s then
    table.insert(s.questions, q)
    s.chat:set_waiting(q.tool_call_id, true)
  end
  M.ask(q)
  if not q.done then
    q.suspended = true
    coroutine.yield()
  end
  return q.result
end

--- Ask the open question of `s` again (the first one, or the one about `tool_call_id`).
---@param s tether.Session
---@param tool_call_id? string
---@return boolean asked
function M.reopen(s, tool_call_id)
  for _, q in ipairs(s.questions) do
    if not tool_call_id or q.tool_call_id == tool_call_id then
      M.ask(q)
      return true
    end
  end
  return false
end

--- `<CR>` in the chat: the question whose card holds the cursor, if it is open.
---@param chat tether.Chat
---@return boolean asked
function M.reopen_at_cursor(chat)
  local id = chat:tool_at_cursor(vim.api.nvim_get_current_win())
  return id ~= nil and M.reopen(chat.session, id)
end

--- The turn of `s` ended (or its daemon exited): its open questions are gone.
---@param s tether.Session
function M.withdraw(s)
  for _, q in ipairs(vim.list_slice(s.questions)) do
    finish(q, nil)
  end
end

return M
