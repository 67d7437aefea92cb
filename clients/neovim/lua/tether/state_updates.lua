--- Session updates applied to a session's state (`tether.state`): the conversation's items,
--- its turns, tool calls, the todo list, usage; and a rewind, live or read back. Pure.

local items = require("tether.state_items")

local M = {}

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
function M.turn_of(state, turn_id)
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
function M.apply(state, turn_id, update, live)
  local kind = update.kind
  if live and ACTIVITY[kind] then
    state.running = true
  end
  if live or kind == "user_message" then
    forget_finished_plan(state, turn_id)
  end
  if kind == "user_message" then
    items.close_text(state)
    state.reply_open = false
    items.push(state, { key = items.next_key(state, "u:"), kind = "user", turnId = turn_id, content = update.content })
    add_turn(state, turn_id, update.content --[[@as tether.ContentBlock[] ]])
    if live then
      state.running = true
    end
  elseif kind == "agent_message_chunk" or kind == "agent_thought_chunk" then
    local text_kind = kind == "agent_message_chunk" and "agent" or "thought"
    local item = items.open_text(state, text_kind)
    if item and item.turnId == turn_id then
      item.text = item.text .. (update.text or "")
      items.touch(item)
    else
      items.close_text(state)
      items.push_reply(state, {
        key = items.next_key(state, text_kind == "agent" and "a:" or "th:"),
        kind = text_kind,
        turnId = turn_id,
        text = update.text or "",
        -- History brings whole blocks: each is a paragraph of its own.
        open = live or nil,
      })
    end
  elseif kind == "tool_call" then
    items.close_text(state)
    local key = "t:" .. update.toolCallId
    local item = state.index[key]
    if item then
      local tool = item.tool --[[@as tether.ToolState]]
      tool.title = update.title or tool.title
      tool.status = update.status or tool.status
      tool.rawInput = update.rawInput or tool.rawInput
      tool.toolKind = update.toolKind or tool.toolKind
      items.touch(item)
    else
      items.push_reply(state, { key = key, kind = "tool", turnId = turn_id, tool = tool_of(update) })
    end
  elseif kind == "tool_call_update" then
    local item = state.index["t:" .. (update.toolCallId or "")]
    if item then
      local tool = item.tool --[[@as tether.ToolState]]
      tool.status = update.status or tool.status
      tool.title = update.title or tool.title
      tool.content = update.content or tool.content
      tool.rejected = update.rejected or tool.rejected
      items.touch(item)
    end
  elseif kind == "plan" then
    state.plan = update.entries
    state.plan_turn = turn_id
  elseif kind == "usage" then
    if live then
      state.live = update --[[@as tether.Usage]]
      -- One model response is over: the next one's text is a new paragraph.
      items.close_text(state)
    end
    if update.contextWindow then
      state.ctx = { tokens = update.contextTokens or 0, window = update.contextWindow }
    end
  elseif kind == "task" then
    state.tasks[update.taskId] = update
    items.note(state, ("⚙ task %s: %s%s"):format(
      update.description or update.taskId,
      update.status,
      update.summary and (" — " .. update.summary) or ""
    ), "info", turn_id)
  elseif kind == "compaction" then
    local text = ("Context compacted: %s → %s tokens."):format(update.tokensBefore, update.tokensAfter)
    items.note(state, text, "info", turn_id)
  elseif kind == "notice" then
    items.note(state, update.message or "", update.level or "warning", turn_id)
  elseif kind == "mode" then
    state.mode = update.mode or state.mode
  elseif kind == "turn_end" then
    items.close_text(state)
    local turn = M.turn_of(state, turn_id)
    if turn then
      turn.stop = update.stopReason
      turn.error = update.error and update.error.message or nil
    end
    if update.stopReason and update.stopReason ~= "end_turn" then
      items.note(state, "", "info", turn_id).stop = { reason = update.stopReason, error = update.error }
      -- A turn that stopped early leaves no tool running.
      for _, item in ipairs(state.items) do
        local tool = item.tool
        if tool and item.turnId == turn_id and (tool.status == "pending" or tool.status == "in_progress") then
          tool.status = "failed"
          items.touch(item)
        end
      end
    end
    state.reply_open = false
    if live then
      state.running = false
    end
  end
end

--- Dim what a rewind took off: the turns from `state.turns[first]` on (they leave the live
--- turns, keeping their numbers) and their items from `state.items[from]` on (`every`: all
--- of them, as a rewind read back from history brings only its own), then say so.
---@param state tether.State
---@param first integer
---@param from integer
---@param every boolean
---@param restored string[] Workspace-relative paths put back.
local function dim(state, first, from, every, restored)
  local gone = {} ---@type table<string, true>
  local prompt = state.turns[first] and state.turns[first].prompt
  for i = #state.turns, first, -1 do
    gone[state.turns[i].turnId] = true
    table.remove(state.turns, i)
  end
  for i = from, #state.items do
    local item = state.items[i]
    if not item.rewound and (every or gone[item.turnId] or item.turnId == "") then
      item.rewound = true
      items.touch(item)
    end
  end
  state.plan, state.plan_turn = nil, nil
  local files = #restored > 0 and ("restored " .. table.concat(restored, ", ")) or "no files needed restoring"
  if not prompt then
    items.note(state, ("⤺ Rewound: %s."):format(files), "info")
    return
  end
  local first_line = vim.split(vim.trim(prompt), "\n", { plain = true })[1] or ""
  local more = prompt:find("\n", 1, true) and "…" or ""
  items.note(state, ("⤺ Rewound to before “%s%s”: %s."):format(first_line, more, files), "info")
end

--- A rewind done now: `turn_id` and every later turn.
---@param state tether.State
---@param turn_id string
---@param restored string[] Workspace-relative paths put back.
function M.rewound(state, turn_id, restored)
  for i, t in ipairs(state.turns) do
    if t.turnId == turn_id then
      for j, item in ipairs(state.items) do
        if item.turnId == turn_id then
          return dim(state, i, j, false, restored)
        end
      end
      return
    end
  end
end

---@class tether.RewoundTurns
---@field at integer How many history entries came before them.
---@field turnId string
---@field restored string[] Workspace-relative paths put back.
---@field history tether.SessionUpdate[]

--- A rewind read back from `tether/loadSession`: the turns it took off, drawn where they
--- were and dimmed, as they were after the rewind live.
---@param state tether.State
---@param rewind tether.RewoundTurns
function M.replay_rewound(state, rewind)
  local first, from = #state.turns + 1, #state.items + 1
  for _, update in ipairs(rewind.history or {}) do
    M.apply(state, update.turnId or "", update, false)
  end
  items.close_text(state)
  state.reply_open = false
  dim(state, first, from, true, rewind.restored or {})
end

return M
