--- The chat's winbar. A default split is narrow, so the parts come in order of importance
--- (a question waiting for the user, then whether the agent works, the mode, the todo list,
--- context, cost, tokens) and the least important ones are dropped until the rest fits.
--- Pure: it reads a session's state and returns text; `layout.lua` puts it in the windows.

local render = require("tether.render")

local M = {}

--- What the mode means for the user, so "plan mode" never reads like the todo list.
M.MODE_LABEL = {
  default = "ask before edits",
  acceptEdits = "accept edits",
  plan = "plan mode",
  bypassPermissions = "bypass permissions",
  dontAsk = "don't ask",
}

---@class tether.StatusPart
---@field text string
---@field hl? string
---@field rank integer Lower is more important: kept longest.

--- Is the todo list worth showing? While a turn runs, or while it has unfinished entries;
--- a finished list from an earlier turn is history, not status (`state.lua` forgets it when
--- the next turn starts).
---@param s tether.State
---@return boolean
function M.plan_active(s)
  if not s.plan or #s.plan == 0 then
    return false
  end
  if s.busy > 0 or s.running then
    return true
  end
  for _, entry in ipairs(s.plan) do
    if entry.status ~= "completed" then
      return true
    end
  end
  return false
end

--- Session totals so far: finished turns plus the running one.
---@param s tether.State
---@return tether.Usage?
function M.totals(s)
  if not s.total and not s.live then
    return nil
  end
  local out = vim.deepcopy(s.total or {})
  for _, key in ipairs({ "inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens" }) do
    out[key] = (out[key] or 0) + ((s.live or {})[key] or 0)
  end
  local cost = (s.total or {}).costUsd
  local live = (s.live or {}).costUsd
  if cost or live then
    out.costUsd = (cost or 0) + (live or 0)
  end
  return out
end

--- The parts, in display order.
---@param s tether.State
---@param icons tether.Icons
---@return tether.StatusPart[]
function M.parts(s, icons)
  local parts = {} ---@type tether.StatusPart[]
  local function add(rank, text, hl)
    parts[#parts + 1] = { rank = rank, text = text, hl = hl }
  end
  local key = s.questions[1]
  local question = key and s.index[key] and s.index[key].question
  if question then
    local title = question.kind == "plan" and "the plan" or render.relative(question.title, s.root)
    add(1, ("%s answer needed: %s"):format(icons.waiting, (title:gsub("\n", " "))), "WarningMsg")
  elseif not s.attached then
    add(1, "daemon exited", "DiagnosticError")
  elseif s.busy > 0 or s.running then
    add(2, icons.in_progress .. " working", "DiagnosticWarn")
  end
  add(3, M.MODE_LABEL[s.mode or "default"] or s.mode, s.mode == "plan" and "DiagnosticInfo" or nil)
  if M.plan_active(s) then
    add(4, "☑ " .. render.plan_summary(s.plan))
  end
  if s.ctx and s.ctx.window and s.ctx.window > 0 then
    add(5, render.context(s.ctx.tokens, s.ctx.window))
  end
  local totals = M.totals(s)
  if totals and totals.costUsd then
    add(6, ("$%.4f"):format(totals.costUsd))
  end
  if totals then
    add(7, ("%s in · %s out"):format(render.count(totals.inputTokens), render.count(totals.outputTokens)))
  end
  add(8, "Tether", "Title")
  return parts
end

local SEP = " │ "

---@param parts tether.StatusPart[]
---@return integer
local function width(parts)
  local w = 0
  for i, part in ipairs(parts) do
    w = w + vim.api.nvim_strwidth(part.text) + (i > 1 and vim.api.nvim_strwidth(SEP) or 0)
  end
  return w
end

--- Drop the least important parts until the rest fits `columns`; cut the last one left.
---@param parts tether.StatusPart[]
---@param columns integer
---@return tether.StatusPart[]
function M.fit(parts, columns)
  parts = vim.deepcopy(parts)
  while #parts > 1 and width(parts) > columns do
    local worst = 1
    for i, part in ipairs(parts) do
      if part.rank > parts[worst].rank then
        worst = i
      end
    end
    table.remove(parts, worst)
  end
  if parts[1] and width(parts) > columns then
    local text = parts[1].text
    while vim.api.nvim_strwidth(text) > math.max(columns - 1, 1) do
      text = vim.fn.strcharpart(text, 0, vim.fn.strchars(text) - 1)
    end
    parts[1].text = text .. "…"
  end
  return parts
end

--- Plain text of the winbar (for tests and `:TetherStatus`-like uses).
---@param parts tether.StatusPart[]
---@return string
function M.text(parts)
  return table.concat(
    vim.tbl_map(function(p)
      return p.text
    end, parts),
    SEP
  )
end

--- The 'winbar' value for a window `columns` wide.
---@param s tether.State
---@param icons tether.Icons
---@param columns integer
---@return string
function M.winbar(s, icons, columns)
  local out = {}
  for _, part in ipairs(M.fit(M.parts(s, icons), columns)) do
    local text = part.text:gsub("%%", "%%%%")
    out[#out + 1] = part.hl and ("%%#%s#%s%%*"):format(part.hl, text) or text
  end
  return table.concat(out, SEP)
end

return M
