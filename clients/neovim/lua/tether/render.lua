--- Pure formatting: session updates and their parts as chat lines and status strings.
--- Nothing here touches a buffer, so the shapes are easy to test and to change.

local M = {}

---@param text string
---@return string[]
function M.lines(text)
  return vim.split(text, "\n", { plain = true })
end

--- A file URI as a path relative to `root` when it is inside it.
---@param uri string
---@param root? string
---@return string
function M.short_path(uri, root)
  local path = vim.startswith(uri, "file:") and vim.uri_to_fname(uri) or uri
  if root and vim.startswith(path, root .. "/") then
    return path:sub(#root + 2)
  end
  return path
end

--- "src/app.py:3-5" for a resource link with a range, "src/app.py" without.
---@param block tether.ContentBlock
---@param root? string
---@return string
function M.link_label(block, root)
  local label = M.short_path(block.uri or "?", root)
  local range = block.range
  if range then
    local first, last = range.start.line + 1, range["end"].line + 1
    if range["end"].character == 0 and last > first then
      last = last - 1 -- an end at column 0 closes the previous line
    end
    label = first == last and ("%s:%d"):format(label, first)
      or ("%s:%d-%d"):format(label, first, last)
  end
  return label
end

---@param content tether.ContentBlock[]
---@param root? string
---@return string[]
function M.user_message(content, root)
  local out = { "## You", "" }
  for _, block in ipairs(content or {}) do
    if block.type == "text" then
      vim.list_extend(out, M.lines(block.text or ""))
    elseif block.type == "resource_link" then
      table.insert(out, "📎 `" .. M.link_label(block, root) .. "`")
    elseif block.type == "image" then
      table.insert(out, "🖼 (image)")
    end
  end
  table.insert(out, "")
  return out
end

--- Lines of one fenced block, elided past `max` lines.
---@param lang string
---@param text string
---@param max integer
---@return string[]
local function fenced(lang, text, max)
  local body = M.lines((text:gsub("\n$", "")))
  local out = { "```" .. lang }
  for i = 1, math.min(#body, max) do
    out[#out + 1] = body[i]
  end
  if #body > max then
    out[#out + 1] = ("… %d more lines"):format(#body - max)
  end
  out[#out + 1] = "```"
  return out
end

--- A unified diff of `old` → `new` (both may be nil for a created or deleted file).
---@param old? string
---@param new? string
---@return string
function M.diff(old, new)
  local a, b = old or "", new or ""
  -- vim.diff wants whole lines; a missing final newline would show as a spurious change.
  if a ~= "" and not vim.endswith(a, "\n") then
    a = a .. "\n"
  end
  if b ~= "" and not vim.endswith(b, "\n") then
    b = b .. "\n"
  end
  return vim.diff(a, b, { result_type = "unified", ctxlen = 3 }) --[[@as string]]
end

---@class tether.ToolState
---@field title string
---@field status tether.ToolStatus
---@field toolKind? string
---@field rawInput? table
---@field content? tether.ToolContent[]

---@param icons tether.Icons
---@param tool tether.ToolState
---@return string
function M.tool_header(icons, tool)
  return ("%s %s"):format(icons[tool.status] or icons.pending, tool.title)
end

---@param tool tether.ToolState
---@param max integer
---@return string[]
function M.tool_body(tool, max)
  local out = {}
  local input = tool.rawInput or {}
  if tool.toolKind == "execute" and type(input.command) == "string" then
    vim.list_extend(out, fenced("sh", "$ " .. input.command, max))
  end
  for _, item in ipairs(tool.content or {}) do
    if item.type == "diff" then
      vim.list_extend(out, fenced("diff", M.diff(item.oldText, item.newText), max))
    elseif item.type == "terminal" then
      local text = vim.trim(item.output or "")
      if item.exitCode then
        text = (text == "" and "" or text .. "\n") .. ("[exit code %d]"):format(item.exitCode)
      end
      vim.list_extend(out, fenced("", text, max))
    elseif item.type == "text" and item.text and item.text ~= "" then
      vim.list_extend(out, fenced("", item.text, max))
    end
  end
  return out
end

---@param n integer?
---@return string
local function count(n)
  n = n or 0
  if n >= 1000 then
    return ("%.1fk"):format(n / 1000)
  end
  return tostring(n)
end

---@param usage tether.Usage
---@return string
function M.usage(usage)
  local parts = { ("%s in · %s out"):format(count(usage.inputTokens), count(usage.outputTokens)) }
  if usage.costUsd then
    parts[#parts + 1] = ("$%.4f"):format(usage.costUsd)
  end
  if usage.contextWindow and usage.contextWindow > 0 and usage.contextTokens then
    parts[#parts + 1] = ("ctx %d%%"):format(math.floor(100 * usage.contextTokens / usage.contextWindow))
  end
  return table.concat(parts, " · ")
end

--- "2/3 Fixing mean()": how far the plan is and what runs now.
---@param entries tether.PlanEntry[]
---@return string
function M.plan_summary(entries)
  local done, current = 0, nil
  for _, entry in ipairs(entries) do
    if entry.status == "completed" then
      done = done + 1
    elseif entry.status == "in_progress" and not current then
      current = entry.activeForm or entry.content
    end
  end
  local summary = ("plan %d/%d"):format(done, #entries)
  return current and (summary .. " " .. current) or summary
end

local PLAN_MARK = { pending = "☐", in_progress = "◐", completed = "☑" }

---@param entries tether.PlanEntry[]
---@return string[]
function M.plan_lines(entries)
  local out = {}
  for _, entry in ipairs(entries) do
    out[#out + 1] = ("%s %s"):format(PLAN_MARK[entry.status] or "☐", entry.content)
  end
  return out
end

--- The full plan as `virt_lines` chunks, for the chat's footer.
---@param entries tether.PlanEntry[]
---@return string[][][]
function M.plan_footer(entries)
  local out = {}
  if #entries > 0 then
    out[1] = { { "── plan ──", "Title" } }
  end
  for i, line in ipairs(M.plan_lines(entries)) do
    out[#out + 1] = { { line, entries[i].status == "completed" and "Comment" or "Normal" } }
  end
  return out
end

--- The chat's status: mode, what the agent is doing, plan progress, usage.
---@param s tether.Session
---@param waiting? string Title of a tool waiting for a permission answer.
---@param icons tether.Icons
---@return string
function M.status_line(s, waiting, icons)
  local parts = { "Tether" }
  if s.mode then
    parts[#parts + 1] = s.mode
  end
  if waiting then
    parts[#parts + 1] = "⚠ waiting for permission: " .. waiting
  elseif s.busy > 0 then
    parts[#parts + 1] = icons.in_progress .. " working"
  end
  if s.plan and #s.plan > 0 then
    parts[#parts + 1] = M.plan_summary(s.plan)
  end
  if s.usage then
    parts[#parts + 1] = M.usage(s.usage)
  end
  return table.concat(parts, " │ ")
end

local STOP_TEXT = {
  cancelled = "_Cancelled._",
  max_tokens = "_Stopped: the reply hit the token limit._",
  max_turn_requests = "_Stopped: too many model requests in one turn._",
  refusal = "_The model refused._",
}

--- The line that closes a turn, or nil when it ended normally.
---@param stop tether.StopReason
---@param err? {code: string, message: string}
---@return string?
function M.stop_line(stop, err)
  if stop == "error" then
    return "**Error:** " .. (err and err.message or "the turn failed")
  end
  return STOP_TEXT[stop]
end

return M
