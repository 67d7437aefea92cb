--- A session's state and the one reducer that builds it (as the VS Code client's
--- `chatState.ts`), with its parts in `state_items.lua` (the item list) and
--- `state_updates.lua` (session updates, rewinds). Pure: no buffers, windows, requests or
--- timers, so every rule about what the user sees can be tested on plain tables.
--- `session.lua` owns one state per session and runs every change through `reduce`; the
--- views (`chat.lua`, `layout.lua`) only read it.
---
--- The conversation is a list of items. Each has a stable `key` and a `rev` that bumps on
--- every change, which is what the chat view compares to redraw only what changed.

local items = require("tether.state_items")
local updates = require("tether.state_updates")

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
---@field changes tether.ChangeListing The turns' changed hunks, pending or kept (`tether/listChanges`).

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
    changes = { files = {}, counts = { pending = 0, kept = 0, undone = 0, conflicts = 0 } },
  }
end

---@param state tether.State
---@param q tether.QuestionState
local function ask(state, q)
  items.close_text(state)
  local tool = state.index["t:" .. q.toolCallId]
  local key = "q:" .. q.id
  items.push(state, { key = key, kind = "question", turnId = tool and tool.turnId or "", question = q })
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
---@param result tether.PromptResult
local function count_turn(state, result)
  if result.usage and result.turnId and not state.counted[result.turnId] then
    state.counted[result.turnId] = true
    state.total = updates.add_usage(state.total, result.usage)
  end
  state.live = nil
end

---@class tether.Hunk
---@field hunkId string
---@field turnId string
---@field state "pending"|"kept"|"undone"
---@field conflict boolean
---@field oldText string
---@field newText string
---@field summary string
---@field range? lsp.Range Where its lines are now (none: they cannot be told).

---@class tether.ChangeListing
---@field files {uri: string, hunks: tether.Hunk[]}[]
---@field counts {pending: integer, kept: integer, undone: integer, conflicts: integer}

--- A session read back (`tether/loadSession`): its history, the turns rewinds took off it.
---@class tether.LoadedAction
---@field type "loaded"
---@field history tether.SessionUpdate[]
---@field rewound? tether.RewoundTurns[]
---@field mode? tether.Mode
---@field usage? tether.Usage

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
---| tether.LoadedAction
---| {type: "changes", listing: tether.ChangeListing}
---| {type: "detached", reason?: string}
---| {type: "attached", mode?: tether.Mode, usage?: tether.Usage, note?: string}

--- Apply one action. Mutates and returns `state`, and the keys of the items it changed.
---@param state tether.State
---@param action tether.Action
---@return tether.State, string[]
function M.reduce(state, action)
  items.begin()
  M._reduce(state, action)
  return state, items.finish()
end

---@param state tether.State
---@param action tether.Action
function M._reduce(state, action)
  local t = action.type
  if t == "update" then
    updates.apply(state, action.turnId or "", action.update, action.live)
  elseif t == "prompt_sent" then
    state.busy = state.busy + 1
    state.context = {}
  elseif t == "prompt_done" then
    state.busy = math.max(0, state.busy - 1)
    local result = action.result
    if result then
      count_turn(state, result)
      local turn = updates.turn_of(state, result.turnId or "")
      if turn then
        turn.stop = result.stopReason
        turn.error = result.error and result.error.message or turn.error
      end
    elseif action.error then
      items.note(state, "Error: " .. action.error, "error")
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
    items.touch(item)
  elseif t == "mode" then
    state.mode = action.mode
  elseif t == "rewound" then
    updates.rewound(state, action.turnId, action.restored or {})
  elseif t == "note" then
    items.note(state, action.text, action.level)
  elseif t == "context" then
    state.context[#state.context + 1] = action.link
  elseif t == "loaded" then
    local rewinds, next_rewind = action.rewound or {}, 1
    local function replay_rewinds_at(at)
      while rewinds[next_rewind] and rewinds[next_rewind].at <= at do
        updates.replay_rewound(state, rewinds[next_rewind])
        next_rewind = next_rewind + 1
      end
    end
    for i, update in ipairs(action.history or {}) do
      replay_rewinds_at(i - 1)
      updates.apply(state, update.turnId or "", update, false)
    end
    replay_rewinds_at(math.huge)
    state.mode = action.mode or state.mode
    state.live, state.running = nil, false
    state.total = action.usage or state.total
  elseif t == "changes" then
    state.changes = action.listing
  elseif t == "detached" then
    state.attached, state.busy, state.running, state.live = false, 0, false, nil
    if action.reason then
      items.note(state, action.reason, "warning")
    end
  elseif t == "attached" then
    state.attached, state.busy, state.running = true, 0, false
    state.mode = action.mode or state.mode
    state.total = action.usage or state.total
    if action.note then
      items.note(state, action.note, "info")
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
