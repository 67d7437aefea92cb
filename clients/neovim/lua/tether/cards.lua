--- Pure: one conversation item (`state.lua`) as the lines the chat shows, and which of its
--- lines is the header of a block that folds. Questions are blocks with the keys that
--- answer them; an answered question shrinks to the line that says what was decided.

local render = require("tether.render")

local M = {}

--- `text` as a Markdown code span, so the chat shows it exactly (a rule's `*` is not emphasis).
---@param text string
---@return string
function M.code(text)
  local ticks = text:find("`", 1, true) and "``" or "`"
  return ticks .. text .. ticks
end

---@class tether.CardOptions
---@field root string
---@field icons tether.Icons
---@field max_tool_lines integer
---@field keys table<string, string|false> Question keys (config `questions.keymaps`).
---@field waiting table<string, true> Tool calls with an open question.

---@class tether.Card
---@field lines string[]
---@field head integer 0-based line of the block header within `lines` (after "## Tether").
---@field fold boolean The block (header and body) folds.
---@field hl? string Highlight of the header line.

--- Which answer key each option is: by option id for plans, by kind for tools.
---@type table<string, string>
M.ACTION_OF = {
  plan_default = "allow",
  plan_accept_edits = "allow_edits",
  plan_keep = "reject",
  allow_once = "allow",
  allow_always = "always_allow",
  reject_once = "reject",
  reject_always = "always_reject",
}

--- The key action of `option`, or nil when no key answers it (`<CR>` still does).
---@param q tether.QuestionState
---@param option tether.PermissionOption
---@return string?
function M.action_of(q, option)
  if q.kind == "plan" then
    return M.ACTION_OF[option.optionId]
  end
  return M.ACTION_OF[option.kind]
end

--- The option a key action answers.
---@param q tether.QuestionState
---@param action string
---@return tether.PermissionOption?
function M.option_for(q, action)
  for _, option in ipairs(q.options) do
    if M.action_of(q, option) == action then
      return option
    end
  end
end

--- "Always" answers save a rule: they need the same key twice.
---@param option tether.PermissionOption
---@return boolean
function M.is_always(option)
  return option.kind == "allow_always" or option.kind == "reject_always"
end

local DESCRIBE = {
  plan_default = "start, asking before edits",
  plan_accept_edits = "start, accepting edits",
  plan_keep = "keep planning (say what should change)",
  allow_once = "allow once",
  reject_once = "reject",
}

---@param q tether.QuestionState
---@param option tether.PermissionOption
---@return string
local function describe(q, option)
  if q.kind == "plan" then
    return DESCRIBE[option.optionId] or option.name
  end
  if option.rule then
    return (option.kind == "allow_always" and "always allow " or "always reject ") .. M.code(option.rule)
  end
  return DESCRIBE[option.kind] or option.name
end

---@param q tether.QuestionState
---@param root string
---@return string
local function question_title(q, root)
  if q.kind == "plan" then
    return "The plan is ready. Start it?"
  end
  local title = render.relative(q.title, root):gsub("\n", " ⏎ ")
  local command = q.rawInput.command
  if type(command) == "string" then
    return "Run this command?"
  end
  return ("Allow %s?"):format(title)
end

---@param q tether.QuestionState
---@return string[]
local function question_body(q)
  local out = {}
  local command = q.rawInput.command
  if q.kind ~= "plan" and type(command) == "string" then
    out[#out + 1] = "```sh"
    vim.list_extend(out, render.lines("$ " .. command))
    out[#out + 1] = "```"
  end
  -- An edit's diff, whole: what is approved is seen.
  for _, item in ipairs(q.content or {}) do
    if item.type == "diff" then
      out[#out + 1] = "```diff"
      local diff = render.diff(item.oldText, item.newText, item.line):gsub("\n$", "")
      vim.list_extend(out, render.lines(diff))
      out[#out + 1] = "```"
    end
  end
  return out
end

---@param q tether.QuestionState
---@param opts tether.CardOptions
---@return string[]
local function answer_lines(q, opts)
  local out = {}
  if q.wants_feedback then
    out[#out + 1] = "↺ Keep planning: write what should change in the prompt area and send it."
    return out
  end
  local unkeyed = false
  for _, option in ipairs(q.options) do
    local action = M.action_of(q, option)
    local key = action and opts.keys[action]
    if key then
      if q.armed == option.optionId then
        out[#out + 1] = ("%s again saves the rule %s (for this workspace)"):format(key, M.code(option.rule or ""))
      else
        local twice = M.is_always(option) and " (press twice)" or ""
        out[#out + 1] = ("%s  %s%s"):format(key, describe(q, option), twice)
      end
    else
      unkeyed = true
    end
  end
  if opts.keys.select and (unkeyed or #out == 0) then
    out[#out + 1] = ("%s  choose from a list"):format(opts.keys.select)
  end
  return out
end

---@param q tether.QuestionState
---@return tether.PermissionOption?
local function chosen(q)
  for _, option in ipairs(q.options) do
    if option.optionId == q.choice then
      return option
    end
  end
end

---@param q tether.QuestionState
---@param root string
---@return string[], string
local function decided(q, root)
  local title = render.relative(q.title, root):gsub("\n", " ⏎ ")
  if q.status == "withdrawn" then
    return { ("– No answer needed any more: %s"):format(title) }, "TetherRewound"
  end
  local option = chosen(q) or { optionId = q.choice or "?", kind = "reject_once", name = q.choice or "?" }
  if q.kind == "plan" then
    if option.optionId == "plan_keep" then
      local lines = { "↺ Kept planning" .. (q.feedback and ". You said:" or ".") }
      for _, line in ipairs(q.feedback and render.lines(q.feedback) or {}) do
        lines[#lines + 1] = "> " .. line
      end
      return lines, "TetherRejected"
    end
    return { "✓ Plan accepted: " .. (DESCRIBE[option.optionId] or option.name) }, "DiagnosticOk"
  end
  local allowed = option.kind == "allow_once" or option.kind == "allow_always"
  local line = allowed and ("✓ Allowed: %s"):format(title) or ("⊘ Rejected: %s"):format(title)
  if M.is_always(option) and option.rule then
    line = line .. (" (saved the rule %s)"):format(M.code(option.rule))
  end
  return { line }, allowed and "DiagnosticOk" or "TetherRejected"
end

---@param item tether.Item
---@param opts tether.CardOptions
---@return string[] lines, boolean fold, string? hl
local function body(item, opts)
  local kind = item.kind
  if kind == "user" then
    local lines = render.user_message(item.content, opts.root)
    if item.rewound then
      lines[1] = "## You (rewound)"
    end
    table.remove(lines) -- the trailing blank: items are separated by the view
    return lines, false, nil
  elseif kind == "agent" then
    return render.lines(item.text or ""), false, nil
  elseif kind == "thought" then
    local lines = { "💭 Thinking" }
    vim.list_extend(lines, render.lines(item.text or ""))
    return lines, true, "Comment"
  elseif kind == "tool" then
    local tool = vim.deepcopy(item.tool) --[[@as tether.ToolState]]
    tool.waiting = opts.waiting[item.key:sub(3)]
    local lines = { render.tool_header(opts.icons, tool, opts.root) }
    vim.list_extend(lines, render.tool_body(tool, opts.max_tool_lines))
    local hl = tool.waiting and "TetherWaiting" or tool.rejected and "TetherRejected" or M.STATUS_HL[tool.status]
    return lines, not render.is_plan(tool), hl
  elseif kind == "question" then
    local q = item.question --[[@as tether.QuestionState]]
    if q.status ~= "open" then
      local lines, hl = decided(q, opts.root)
      return lines, false, hl
    end
    local lines = { ("%s %s"):format(opts.icons.waiting, question_title(q, opts.root)) }
    vim.list_extend(lines, question_body(q))
    vim.list_extend(lines, answer_lines(q, opts))
    return lines, false, "TetherWaiting"
  end
  -- note
  if item.stop then
    local line = render.stop_line(item.stop.reason, item.stop.error) or ""
    return render.lines(line), false, nil
  end
  return render.lines(item.text or ""), false, item.level == "error" and "DiagnosticError" or nil
end

M.STATUS_HL = {
  pending = "DiagnosticHint",
  in_progress = "DiagnosticWarn",
  completed = "DiagnosticOk",
  failed = "DiagnosticError",
}

--- The lines of `item` (without the blank line that separates it from the one above).
---@param item tether.Item
---@param opts tether.CardOptions
---@return tether.Card
function M.card(item, opts)
  local lines, fold, hl = body(item, opts)
  local head = 0
  if item.reply_start then
    local header = { item.rewound and "## Tether (rewound)" or "## Tether", "" }
    head = #header
    lines = vim.list_extend(header, lines)
  end
  return { lines = lines, head = head, fold = fold and #lines - head > 1, hl = hl }
end

return M
