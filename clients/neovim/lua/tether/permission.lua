--- `tether/requestPermission`: the daemon asks before a tool runs; the user answers through
--- `vim.ui.select`, so telescope, fzf-lua, snacks or any other override shows the question.
---
--- Neovim runs server requests inside a coroutine, which lets the handler wait for an
--- asynchronous picker and still return the answer as its result.

local config = require("tether.config")
local diff = require("tether.diff")

local M = {}

--- `vim.ui.select` as a blocking call inside the handler's coroutine. Pickers may answer
--- synchronously (the built-in one does) or later (most overrides do).
---@generic T
---@param items T[]
---@param opts table
---@return T?
function M.select(items, opts)
  local co, is_main = coroutine.running()
  local answered, answer, suspended = false, nil, false
  vim.ui.select(items, opts, function(item)
    answered, answer = true, item
    if suspended then
      suspended = false
      -- Scheduled: a picker may answer from a fast event, where the handler cannot touch
      -- windows (the diff preview) or buffers.
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if not answered then
    if not co or is_main then
      -- Cannot wait outside a coroutine; an unanswerable question is a rejection.
      return nil
    end
    suspended = true
    coroutine.yield()
  end
  return answer
end

---@param tool {title: string, rawInput: table?}
---@return string
function M.question(tool)
  local text = "Tether wants to: " .. tool.title
  local command = tool.rawInput and tool.rawInput.command
  if type(command) == "string" then
    text = text .. " — $ " .. command
  end
  return (text:gsub("\n", " ⏎ "))
end

---@param params tether.PermissionParams
---@return table
function M.handle(params, _)
  local session = require("tether.session").sessions[params.sessionId]
  local tool = params.toolCall
  local preview = nil ---@type integer?
  if config.options.permissions.preview_diff then
    preview = diff.open(tool.title, tool.content, session and session.root)
  end
  if session then
    session.chat:set_waiting(tool.title)
  end
  local ok, choice = pcall(M.select, params.options, {
    prompt = M.question(tool),
    kind = "tether.permission",
    format_item = function(option)
      return option.name
    end,
  })
  diff.close(preview)
  if session then
    session.chat:set_waiting(nil)
  end
  if not ok then
    require("tether.log").error("permission question failed: " .. tostring(choice))
    choice = nil
  end
  if not choice then
    return { outcome = { outcome = "cancelled" } }
  end
  return { outcome = { outcome = "selected", optionId = choice.optionId } }
end

return M
