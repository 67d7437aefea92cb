--- A session's state and the one reducer that builds it (as the VS Code client's
--- `chatState.ts`). Pure: no buffers, windows, requests or timers, so every rule about what
--- the user sees can be tested on plain tables. `session.lua` owns one state per session and
--- runs every change through `reduce`; the views (`chat.lua`, `layout.lua`) only read it.
---
--- The conversation is a list of items. Each has a stable `key` and a `rev` that bumps on
--- every change, which is what the chat view compares to redraw only what changed.

local M = {}

---@alias tether.ItemKind "user"|"agent"|"thought"|"tool"|"question"|"note"

---@class tether.Item
---@field key string Stable id: "u:3", "a:4", "t:<toolCallId>", "q:<questionId>", "n:5".
---@field kind tether.ItemKind
---@field turnId string "" when not known.
---@field rev integer
---@field reply_start? boolean The first item of a reply: the view writes the "## Tether" header.
---@field rewound? boolean Its turn was rewound: still shown, dimmed.
---@field open? boolean agent/thought: text still streams into it.
---@field content? tether.ContentBlock[] user: the prompt.
---@field text? string agent/thought/note.
---@field level? "info"|"warning"|"error" note.
---@field tool? tether.ToolState tool.
---@field question? tether.QuestionState question.
---@field stop? {reason: tether.StopReason, error?: {code: string, message: string}} note: how a turn stopped.

---@class tether.QuestionState
---@field id string
---@field kind "tool"|"plan"
---@field toolCallId string
---@field title string
---@field rawInput table
---@field content tether.ToolContent[]
---@field plan? string
---@field options tether.PermissionOption[]
---@field status "open"|"answered"|"withdrawn"
---@field armed? string An "always" option whose confirming second key is awaited.
---@field choice? string The option chosen.
---@field feedback? string What the user said with it (plan: what should change).
---@field wants_feedback? boolean "Keep planning" chosen: the prompt area takes what should change.

---@class tether.TurnInfo
---@field turnId string
---@field prompt string The prompt's text (whole, maybe several lines).
---@field n integer 1-based number of the turn in this session (rewound turns keep theirs).
---@field stop? tether.StopReason How it ended.
---@field error? string Why it failed.

---@class tether.State
---@field id string
---@field root string
---@field mode tether.Mode
---@field busy integer Prompts sent and not answered yet.
---@field running boolean A turn is running (also one the daemon started by itself).
---@field items tether.Item[]
---@field index table<string, tether.Item> Items by key.
---@field seq integer Counter for item keys.
---@field turn_count integer Turns numbered so far.
---@field turns tether.TurnInfo[] Live turns in conversation order (what `:TetherRewind` offers).
---@field reply_open boolean The current reply has its header.
---@field plan? tether.PlanEntry[]
---@field plan_turn? string The turn that wrote the todo list.
---@field total? tether.Usage Usage of finished turns (the whole session after a resume).
---@field live? tether.Usage Usage of the running turn so far.
---@field counted table<string, true> Turns whose usage is in `total`.
---@field ctx? {tokens: integer, window: integer} Context use at the last model call.
---@field tasks table<string, tether.SessionUpdate> Background tasks by taskId.
---@field context tether.ContentBlock[] Selections that go with the next prompt.
---@field questions string[] Keys of open questions, oldest first.
---@field attached boolean The daemon holds the session (false after it exited).

---@param id string
---@param root string
---@param mode? tether.Mode
---@return tether.State
function M.new(id, root, mode)
  return {
    id = id,
    root = root,
    mode = mode or "default",
    busy = 0,
    running = false,
    items = {},
    index = {},
    seq = 0,
    turn_count = 0,
    turns = {},
    reply_open = false,
    counted = {},
    tasks = {},
    context = {},
    questions = {},
    attached = true,
  }
end

--- The text of a prompt's text blocks, in order (lines kept).
---@param content tether.ContentBlock[]?
---@return string
function M.prompt_text(content)
  local parts = {}
  for _, block in ipairs(content or {}) do
    if block.type == "text" and block.text then
      parts[#parts + 1] = block.text
    end
  end
  return table.concat(parts, "\n")
end

--- Keys of the items the action being reduced changed, in order (what views redraw).
---@type string[]
local changed = {}
---@type table<string, true>
local seen = {}

---@param key string
local function mark(key)
  if not seen[key] then
    seen[key] = true
    changed[#changed + 1] = key
  end
end

---@param state tether.State
---@param item tether.Item
---@return tether.Item
local function push(state, item)
  item.rev = 1
  state.items[#state.items + 1] = item
  state.index[item.key] = item
  mark(item.key)
  return item
end

---@param state tether.State
---@param prefix string
---@return string
local function next_key(state, prefix)
  state.seq = state.seq + 1
  return prefix .. state.seq
end

---@param item tether.Item
local function touch(item)
  item.rev = item.rev + 1
  mark(item.key)
end

--- The last item, if it is still taking streamed text of `kind`.
---@param state tether.State
---@param kind "agent"|"thought"
---@return tether.Item?
local function open_text(state, kind)
  local last = state.items[#state.items]
  if last and last.kind == kind and last.open then
    return last
  end
end

--- Streamed text ends here: what comes next starts a paragraph of its own.
---@param state tether.State
local function close_text(state)
  local last = state.items[#state.items]
  if last and last.open then
    last.open = nil
  end
end

---@param state tether.State
---@param item tether.Item
---@return tether.Item
local function push_reply(state, item)
  if not state.reply_open then
    item.reply_start = true
    state.reply_open = true
  end
  return push(state, item)
end

---@param a? tether.Usage
---@param b tether.Usage
---@return tether.Usage
function M.add_usage(a, b)
  local out = vim.deepcopy(a or {})
  for _, key in ipairs({ "inputTokens", "outputTokens", "cacheReadTokens", "cacheCreationTokens" }) do
    out[key] = (out[key] or 0) + (b[key] or 0)
  end
  if out.costUsd or b.costUsd then
    out.costUsd = (out.costUsd or 0) + (b.costUsd or 0)
  end
  return out
end

--- A finished todo list belongs to the turn that finished it, not to the next one.
---@param state tether.State
---@param turn_id string
local function forget_finished_plan(state, turn_id)
  if not state.plan or turn_id == state.plan_turn then
    return
  end
  for _, entry in ipairs(state.plan) do
    if entry.status ~= "completed" then
      return
    end
  end
  state.plan, state.plan_turn = nil, nil
end

---@param state tether.State
---@param turn_id string
---@param content tether.ContentBlock[]
local function add_turn(state, turn_id, content)
  if turn_id == "" then
    return
  end
  for _, t in ipairs(state.turns) do
    if t.turnId == turn_id then
      return
    end
  end
  state.turn_count = state.turn_count + 1
  state.turns[#state.turns + 1] = { turnId = turn_id, prompt = M.prompt_text(content), n = state.turn_count }
end

---@param state tether.State
---@param turn_id string
---@return tether.TurnInfo?
local function turn_of(state, turn_id)
  for _, t in ipairs(state.turns) do
    if t.turnId == turn_id then
      return t
    end
  end
end

---@param update tether.SessionUpdate
---@return tether.ToolState
local function tool_of(update)
  return {
    title = update.title or "tool",
    status = update.status or "pending",
    toolKind = update.toolKind,
    rawInput = update.rawInput,
    rejected = update.rejected,
  }
end

local ACTIVITY = { agent_message_chunk = true, agent_thought_chunk = true, tool_call = true }

--- One session update (live, or from a loaded session's history).
---@param state tether.State
---@param turn_id string
---@param update tether.SessionUpdate
---@param live boolean
local function apply_update(state, turn_id, update, live)
  local kind = update.kind
  if live and ACTIVITY[kind] then
    state.running = true
  end
  if live or kind == "user_message" then
    forget_finished_plan(state, turn_id)
  end
  if kind == "user_message" then
    close_text(state)
    state.reply_open = false
    push(state, { key = next_key(state, "u:"), kind = "user", turnId = turn_id, content = update.content })
    add_turn(state, turn_id, update.content --[[@as tether.ContentBlock[] ]])
    if live then
      state.running = true
    end
  elseif kind == "agent_message_chunk" or kind == "agent_thought_chunk" then
    local text_kind = kind == "agent_message_chunk" and "agent" or "thought"
    local item = open_text(state, text_kind)
    if item and item.turnId == turn_id then
      item.text = item.text .. (update.text or "")
      touch(item)
    else
      close_text(state)
      push_reply(state, {
        key = next_key(state, text_kind == "agent" and "a:" or "th:"),
        kind = text_kind,
        turnId = turn_id,
        text = update.text or "",
        -- History brings whole blocks: each is a paragraph of its own.
        open = live or nil,
      })
    end
  elseif kind == "tool_call" then
    close_text(state)
    local key = "t:" .. update.toolCallId
    local item = state.index[key]
    if item then
      local tool = item.tool --[[@as tether.ToolState]]
      tool.title = update.title or tool.title
      tool.status = update.status or tool.status
      tool.rawInput = update.rawInput or tool.rawInput
      tool.toolKind = update.toolKind or tool.toolKind
      touch(item)
    else
      push_reply(state, { key = key, kind = "tool", turnId = turn_id, tool = tool_of(update) })
    end
  elseif kind == "tool_call_update" then
    local item = state.index["t:" .. (update.toolCallId or "")]
    if item then
      local tool = item.tool --[[@as tether.ToolState]]
      tool.status = update.status or tool.status
      tool.title = update.title or tool.title
      tool.content = update.content or tool.content
      tool.rejected = update.rejected or tool.rejected
      touch(item)
    end
  elseif kind == "plan" then
    state.plan = update.entries
    state.plan_turn = turn_id
  elseif kind == "usage" then
    if live then
      state.live = update --[[@as tether.Usage]]
      -- One model response is over: the next one's text is a new paragraph.
      close_text(state)
    end
    if update.contextWindow then
      state.ctx = { tokens = update.contextTokens or 0, window = update.contextWindow }
    end
  elseif kind == "task" then
    state.tasks[update.taskId] = update
    M.note(state, ("⚙ task %s: %s%s"):format(
      update.description or update.taskId,
      update.status,
      update.summary and (" — " .. update.summary) or ""
    ), "info", turn_id)
  elseif kind == "compaction" then
    local text = ("Context compacted: %s → %s tokens."):format(update.tokensBefore, update.tokensAfter)
    M.note(state, text, "info", turn_id)
  elseif kind == "notice" then
    M.note(state, update.message or "", update.level or "warning", turn_id)
  elseif kind == "mode" then
    state.mode = update.mode or state.mode
  elseif kind == "turn_end" then
    close_text(state)
    local turn = turn_of(state, turn_id)
    if turn then
      turn.stop = update.stopReason
      turn.error = update.error and update.error.message or nil
    end
    if update.stopReason and update.stopReason ~= "end_turn" then
      M.note(state, "", "info", turn_id).stop = { reason = update.stopReason, error = update.error }
      -- A turn that stopped early leaves no tool running.
      for _, item in ipairs(state.items) do
        local tool = item.tool
        if tool and item.turnId == turn_id and (tool.status == "pending" or tool.status == "in_progress") then
          tool.status = "failed"
          touch(item)
        end
      end
    end
    state.reply_open = false
    if live then
      state.running = false
    end
  end
end

--- A line of its own in the chat (not the agent's prose). Returns the item.
---@param state tether.State
---@param text string
---@param level? "info"|"warning"|"error"
---@param turn_id? string
---@return tether.Item
function M.note(state, text, level, turn_id)
  close_text(state)
  return push(state, { key = next_key(state, "n:"), kind = "note", turnId = turn_id or "", text = text, level = level })
end

---@param state tether.State
---@param q tether.QuestionState
local function ask(state, q)
  close_text(state)
  local tool = state.index["t:" .. q.toolCallId]
  local key = "q:" .. q.id
  push(state, { key = key, kind = "question", turnId = tool and tool.turnId or "", question = q })
  state.questions[#state.questions + 1] = key
end

---@param state tether.State
---@param key string
local function close_question(state, key)
  for i, k in ipairs(state.questions) do
    if k == key then
      table.remove(state.questions, i)
      return
    end
  end
end

---@param state tether.State
---@param turn_id string
---@param restored string[] Workspace-relative paths put back.
local function rewound(state, turn_id, restored)
  local first
  for i, t in ipairs(state.turns) do
    if t.turnId == turn_id then
      first = i
      break
    end
  end
  if not first then
    return
  end
  local gone = {} ---@type table<string, true>
  local prompt = state.turns[first].prompt
  for i = #state.turns, first, -1 do
    gone[state.turns[i].turnId] = true
    table.remove(state.turns, i)
  end
  local from
  for i, item in ipairs(state.items) do
    if item.turnId == turn_id and not from then
      from = i
    end
    if from and not item.rewound and (gone[item.turnId] or item.turnId == "") then
      item.rewound = true
      touch(item)
    end
  end
  state.plan, state.plan_turn = nil, nil
  local first_line = vim.split(vim.trim(prompt), "\n", { plain = true })[1] or ""
  local more = prompt:find("\n", 1, true) and "…" or ""
  M.note(state, ("⤺ Rewound to before “%s%s”: %s."):format(
    first_line,
    more,
    #restored > 0 and ("restored " .. table.concat(restored, ", ")) or "no files needed restoring"
  ), "info")
end

---@param state tether.State
---@param result tether.PromptResult
local function count_turn(state, result)
  if result.usage and result.turnId and not state.counted[result.turnId] then
    state.counted[result.turnId] = true
    state.total = M.add_usage(state.total, result.usage)
  end
  state.live = nil
end

--- Actions: everything that changes a session, from the daemon or from the user.
---@alias tether.Action
---| {type: "update", turnId: string, update: tether.SessionUpdate, live: boolean}
---| {type: "prompt_sent", content: tether.ContentBlock[]}
---| {type: "prompt_done", result?: tether.PromptResult, error?: string}
---| {type: "question", question: tether.QuestionState}
---| {type: "arm", id: string, optionId?: string}
---| {type: "answered", id: string, optionId: string, feedback?: string}
---| {type: "wants_feedback", id: string, on: boolean}
---| {type: "withdrawn", id: string}
---| {type: "mode", mode: tether.Mode}
---| {type: "rewound", turnId: string, restored: string[]}
---| {type: "note", text: string, level?: "info"|"warning"|"error"}
---| {type: "context", link: tether.ContentBlock}
---| {type: "loaded", history: tether.SessionUpdate[], mode?: tether.Mode, usage?: tether.Usage}
---| {type: "detached", reason?: string}
---| {type: "attached", mode?: tether.Mode, usage?: tether.Usage, note?: string}

--- Apply one action. Mutates and returns `state`, and the keys of the items it changed.
---@param state tether.State
---@param action tether.Action
---@return tether.State, string[]
function M.reduce(state, action)
  changed, seen = {}, {}
  M._reduce(state, action)
  local out = changed
  changed, seen = {}, {}
  return state, out
end

---@param state tether.State
---@param action tether.Action
function M._reduce(state, action)
  local t = action.type
  if t == "update" then
    apply_update(state, action.turnId or "", action.update, action.live)
  elseif t == "prompt_sent" then
    state.busy = state.busy + 1
    state.context = {}
  elseif t == "prompt_done" then
    state.busy = math.max(0, state.busy - 1)
    local result = action.result
    if result then
      count_turn(state, result)
      local turn = turn_of(state, result.turnId or "")
      if turn then
        turn.stop = result.stopReason
        turn.error = result.error and result.error.message or turn.error
      end
    elseif action.error then
      M.note(state, "Error: " .. action.error, "error")
    end
    if state.busy == 0 then
      state.running = false
    end
  elseif t == "question" then
    ask(state, action.question)
  elseif t == "arm" or t == "answered" or t == "wants_feedback" or t == "withdrawn" then
    local item = state.index["q:" .. action.id]
    local q = item and item.question
    if not q or q.status ~= "open" then
      return
    end
    if t == "arm" then
      q.armed = action.optionId
    elseif t == "wants_feedback" then
      q.wants_feedback = action.on or nil
    elseif t == "answered" then
      q.status, q.choice, q.feedback, q.armed, q.wants_feedback = "answered", action.optionId, action.feedback, nil, nil
      close_question(state, item.key)
    else
      q.status, q.armed, q.wants_feedback = "withdrawn", nil, nil
      close_question(state, item.key)
    end
    touch(item)
  elseif t == "mode" then
    state.mode = action.mode
  elseif t == "rewound" then
    rewound(state, action.turnId, action.restored or {})
  elseif t == "note" then
    M.note(state, action.text, action.level)
  elseif t == "context" then
    state.context[#state.context + 1] = action.link
  elseif t == "loaded" then
    for _, update in ipairs(action.history or {}) do
      apply_update(state, update.turnId or "", update, false)
    end
    state.mode = action.mode or state.mode
    state.live, state.running = nil, false
    state.total = action.usage or state.total
  elseif t == "detached" then
    state.attached, state.busy, state.running, state.live = false, 0, false, nil
    if action.reason then
      M.note(state, action.reason, "warning")
    end
  elseif t == "attached" then
    state.attached, state.busy, state.running = true, 0, false
    state.mode = action.mode or state.mode
    state.total = action.usage or state.total
    if action.note then
      M.note(state, action.note, "info")
    end
  end
end

--- The question items still open, oldest first.
---@param state tether.State
---@return tether.QuestionState[]
function M.open_questions(state)
  local out = {}
  for _, key in ipairs(state.questions) do
    out[#out + 1] = state.index[key].question
  end
  return out
end

return M
