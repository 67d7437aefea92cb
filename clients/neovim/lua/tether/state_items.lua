--- The item list of a session's state (`tether.state`): stable keys, revisions, and which
--- items the action being reduced changed (what the chat view redraws). Pure.

local M = {}

--- Keys of the items the action being reduced changed, in order (what views redraw).
---@type string[]
local changed = {}
---@type table<string, true>
local seen = {}

--- Start counting the items an action changes.
function M.begin()
  changed, seen = {}, {}
end

--- The keys of the items changed since `begin()`, in order.
---@return string[]
function M.finish()
  local out = changed
  changed, seen = {}, {}
  return out
end

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
function M.push(state, item)
  item.rev = 1
  state.items[#state.items + 1] = item
  state.index[item.key] = item
  mark(item.key)
  return item
end

---@param state tether.State
---@param prefix string
---@return string
function M.next_key(state, prefix)
  state.seq = state.seq + 1
  return prefix .. state.seq
end

---@param item tether.Item
function M.touch(item)
  item.rev = item.rev + 1
  mark(item.key)
end

--- The last item, if it is still taking streamed text of `kind`.
---@param state tether.State
---@param kind "agent"|"thought"
---@return tether.Item?
function M.open_text(state, kind)
  local last = state.items[#state.items]
  if last and last.kind == kind and last.open then
    return last
  end
end

--- Streamed text ends here: what comes next starts a paragraph of its own.
---@param state tether.State
function M.close_text(state)
  local last = state.items[#state.items]
  if last and last.open then
    last.open = nil
  end
end

---@param state tether.State
---@param item tether.Item
---@return tether.Item
function M.push_reply(state, item)
  if not state.reply_open then
    item.reply_start = true
    state.reply_open = true
  end
  return M.push(state, item)
end

--- A line of its own in the chat (not the agent's prose). Returns the item.
---@param state tether.State
---@param text string
---@param level? "info"|"warning"|"error"
---@param turn_id? string
---@return tether.Item
function M.note(state, text, level, turn_id)
  M.close_text(state)
  local key = M.next_key(state, "n:")
  return M.push(state, { key = key, kind = "note", turnId = turn_id or "", text = text, level = level })
end

return M
