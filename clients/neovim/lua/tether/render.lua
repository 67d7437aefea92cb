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
    local from, to = range.start.character, range["end"].character
    if from == 0 and to == 0 then -- whole lines: an end at column 0 closes the previous line
      last = last > first and last - 1 or last
      return first == last and ("%s:%d"):format(label, first) or ("%s:%d-%d"):format(label, first, last)
    end
    -- A characterwise selection: line:column of both ends (columns 1-based, end inclusive).
    return ("%s:%d:%d-%d:%d"):format(label, first, from + 1, last, math.max(to, 1))
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
--- `line` (zero-based) says the texts are a region of the file that starts there (a big
--- file's diff): the hunks are then numbered as in the file.
---@param old? string
---@param new? string
---@param line? integer
---@return string
function M.diff(old, new, line)
  local a, b = old or "", new or ""
  -- vim.diff wants whole lines; a missing final newline would show as a spurious change.
  if a ~= "" and not vim.endswith(a, "\n") then
    a = a .. "\n"
  end
  if b ~= "" and not vim.endswith(b, "\n") then
    b = b .. "\n"
  end
  local diff = vim.diff(a, b, { result_type = "unified", ctxlen = 3 }) --[[@as string]]
  if not line or line == 0 then
    return diff
  end
  local lines = vim.split(diff, "\n", { plain = true })
  for i, text in ipairs(lines) do
    local from, old_count, to, new_count, rest = text:match("^@@ %-(%d+)(,?%d*) %+(%d+)(,?%d*) @@(.*)$")
    if from then
      lines[i] = ("@@ -%d%s +%d%s @@%s"):format(from + line, old_count, to + line, new_count, rest)
    end
  end
  return table.concat(lines, "\n")
end

---@class tether.ToolState
---@field title string
---@field status tether.ToolStatus
---@field toolKind? string
---@field rawInput? table
---@field content? tether.ToolContent[]
---@field rejected? "user"|"rule"|"hook"|"mode" Why it did not run (a rejection is not a failure).
---@field waiting? boolean A permission question about it is open (set by the view).

local REJECTED_BY = {
  user = "Rejected by you",
  rule = "Rejected by a permission rule",
  hook = "Rejected by a hook",
  mode = "Not allowed in this mode",
}

--- Absolute paths inside the workspace, as the workspace-relative paths users think in.
---@param text string
---@param root? string
---@return string
function M.relative(text, root)
  if not root or root == "/" then
    return text
  end
  return (text:gsub(vim.pesc(root .. "/"), ""))
end

--- A plan's own tool call (ExitPlanMode): "rejected" means the user kept planning.
---@param tool tether.ToolState
---@return boolean
function M.is_plan(tool)
  return tool.rawInput ~= nil and type(tool.rawInput.plan) == "string"
end

---@param icons tether.Icons
---@param tool tether.ToolState
---@param root? string
---@return string
function M.tool_header(icons, tool, root)
  local title = M.relative(tool.title, root):gsub("\n", " ⏎ ")
  if tool.waiting then
    return ("%s %s"):format(icons.waiting, title)
  end
  if tool.rejected then
    local why = M.is_plan(tool) and tool.rejected == "user" and "Kept planning" or REJECTED_BY[tool.rejected]
    return ("%s %s — %s"):format(icons.rejected, title, why or "Rejected")
  end
  return ("%s %s"):format(icons[tool.status] or icons.pending, title)
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
  if type(input.plan) == "string" then
    -- A plan is prose for the user to read, not output: shown as Markdown, in full.
    vim.list_extend(out, M.lines(vim.trim(input.plan)))
    return out
  end
  for _, item in ipairs(tool.content or {}) do
    if item.type == "diff" then
      vim.list_extend(out, fenced("diff", M.diff(item.oldText, item.newText, item.line), max))
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
function M.count(n)
  n = n or 0
  if n >= 1000 then
    return ("%.1fk"):format(n / 1000)
  end
  return tostring(n)
end

--- "ctx 0.8%" for a small share of a big window (1M tokens), "ctx 42%" above 10%.
---@param tokens integer
---@param window integer
---@return string
function M.context(tokens, window)
  local share = 100 * tokens / window
  if share > 0 and share < 10 then
    return ("ctx %.1f%%"):format(math.max(share, 0.1))
  end
  return ("ctx %d%%"):format(math.floor(share + 0.5))
end

---@param usage tether.Usage
---@return string
function M.usage(usage)
  local parts = { ("%s in · %s out"):format(M.count(usage.inputTokens), M.count(usage.outputTokens)) }
  if usage.costUsd then
    parts[#parts + 1] = ("$%.4f"):format(usage.costUsd)
  end
  if usage.contextWindow and usage.contextWindow > 0 and usage.contextTokens then
    parts[#parts + 1] = M.context(usage.contextTokens, usage.contextWindow)
  end
  return table.concat(parts, " · ")
end

--- "2/3 Fixing mean()": how far the todo list is and what runs now.
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
  local summary = ("%d/%d"):format(done, #entries)
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
    return "**Error:** " .. M.turn_error(err and err.message or "the turn failed")
  end
  return STOP_TEXT[stop]
end

--- A failed turn's message; one that names an environment variable (a key, a base URL) says
--- how to give a fixed environment to the daemon, which only a new daemon sees.
---@param message string
---@return string
function M.turn_error(message)
  local var = message:match("[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]")
  if var and not message:find(":TetherRestart", 1, true) then
    return ("%s (in Neovim: :let $%s = '…', then :TetherRestart)"):format(message, var)
  end
  return message
end

return M
