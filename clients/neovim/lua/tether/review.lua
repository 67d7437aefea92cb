--- Reviewing a turn's changes where they are: a sign on each changed hunk in the real
--- buffer (pending or kept), moving between hunks, keeping or undoing the hunk under the
--- cursor or all in the file, and the review list (`:TetherReview`, the quickfix list) of
--- every pending hunk. A view: it draws the session's `changes` (`state.lua`) and asks the
--- session (`session.lua`) to keep or undo; the daemon does the edit (a versioned
--- `workspace/applyEdit`, so `u` takes an undo back) and says what changed.

local config = require("tether.config")
local log = require("tether.log")

local M = {}

M.ns = vim.api.nvim_create_namespace("tether.review")
local QF_TITLE = "Tether review"

--- The session each drawn buffer's signs come from, and the hunk of each sign.
---@type table<integer, {session: tether.Session, hunks: table<integer, tether.Hunk>}>
local drawn = {}

local function define_highlights()
  vim.api.nvim_set_hl(0, "TetherHunkPending", { link = "Added", default = true })
  vim.api.nvim_set_hl(0, "TetherHunkKept", { link = "Comment", default = true })
end
define_highlights()
vim.api.nvim_create_autocmd("ColorScheme", {
  group = vim.api.nvim_create_augroup("tether.review.highlights", { clear = true }),
  callback = define_highlights,
})

--- The loaded buffer of `uri`, if there is one (no buffer is made for a file not open).
---@param uri string
---@return integer?
local function loaded_buffer(uri)
  local buf = vim.fn.bufnr(vim.uri_to_fname(uri))
  if buf > 0 and vim.api.nvim_buf_is_loaded(buf) then
    return buf
  end
end

--- First and last line (0-based, inclusive) a hunk's sign covers in a buffer of `count` lines.
---@param range lsp.Range
---@param count integer
---@return integer, integer
local function rows_of(range, count)
  local first = math.min(range.start.line, count - 1)
  local last = range["end"].line - ((range["end"].character == 0 and range["end"].line > range.start.line) and 1 or 0)
  return first, math.max(first, math.min(last, count - 1))
end

---@param buf integer
local function clear(buf)
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  end
  drawn[buf] = nil
end

--- The user's own buffer-local mappings the review keys went over (a gitsigns-style `]h`),
--- per buffer and key: put back when the buffer has no hunk left.
---@type table<integer, table<string, table>>
local shadowed = {}

---@param buf integer
---@param lhs string
---@return table? mapping the buffer-local mapping of `lhs` in `buf`, if any
local function buffer_map(buf, lhs)
  local found = vim.api.nvim_buf_call(buf, function()
    return vim.fn.maparg(lhs, "n", false, true)
  end)
  return found.buffer == 1 and found or nil
end

---@param map table?
---@return boolean
local function is_ours(map)
  return map ~= nil and type(map.desc) == "string" and vim.startswith(map.desc, "Tether: ")
end

---@param buf integer
local function keymaps(buf)
  local keys = config.options.review.keymaps
  local any = drawn[buf] and next(drawn[buf].hunks) ~= nil
  for action, lhs in pairs(keys) do
    if lhs then
      local existing = buffer_map(buf, lhs)
      if any and not is_ours(existing) then
        if existing then
          shadowed[buf] = shadowed[buf] or {}
          shadowed[buf][lhs] = existing
        end
        vim.keymap.set("n", lhs, function()
          M[action]()
        end, { buffer = buf, desc = "Tether: " .. action:gsub("_", " ") })
      elseif not any and is_ours(existing) then
        pcall(vim.keymap.del, "n", lhs, { buffer = buf })
        local own = shadowed[buf] and shadowed[buf][lhs]
        if own then
          shadowed[buf][lhs] = nil
          vim.api.nvim_buf_call(buf, function()
            vim.fn.mapset(own)
          end)
        end
      end
    end
  end
end

--- Draw `s`'s hunks of the file in `buf`.
---@param s tether.Session
---@param buf integer
local function draw_buffer(s, buf)
  clear(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  local signs = config.options.review.signs
  local count = vim.api.nvim_buf_line_count(buf)
  local entry = { session = s, hunks = {} }
  for _, file in ipairs(s.state.changes.files or {}) do
    if vim.uri_to_fname(file.uri) == name then
      for _, hunk in ipairs(file.hunks) do
        if hunk.range and (hunk.state == "pending" or hunk.state == "kept") then
          local first, last = rows_of(hunk.range, count)
          local id = vim.api.nvim_buf_set_extmark(buf, M.ns, first, 0, {
            end_row = last,
            sign_text = hunk.state == "pending" and signs.pending or signs.kept,
            sign_hl_group = hunk.state == "pending" and "TetherHunkPending" or "TetherHunkKept",
            priority = 8,
          })
          entry.hunks[id] = hunk
        end
      end
    end
  end
  drawn[buf] = entry
  keymaps(buf)
end

--- Redraw every loaded buffer `s` has hunks in (and clear those it had).
---@param s tether.Session
local function draw(s)
  for buf, entry in pairs(drawn) do
    if entry.session == s then
      clear(buf)
      if vim.api.nvim_buf_is_valid(buf) then
        keymaps(buf)
      end
    end
  end
  for _, file in ipairs(s.state.changes.files or {}) do
    local buf = loaded_buffer(file.uri)
    if buf then
      draw_buffer(s, buf)
    end
  end
end

--- The sessions drawn, by id (the review list names its entries' session).
---@type table<string, tether.Session>
local attached = {}

--- The hunk whose lines hold the cursor, if any.
---@return tether.Hunk?, tether.Session?
local function hunk_at_cursor()
  local buf = vim.api.nvim_get_current_buf()
  local entry = drawn[buf]
  if not entry then
    return nil
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, M.ns, 0, -1, { details = true })) do
    local last = mark[4].end_row or mark[2]
    if mark[2] <= row and row <= last and entry.hunks[mark[1]] then
      return entry.hunks[mark[1]], entry.session
    end
  end
end

--- Move to the next (or previous) pending hunk of the buffer, wrapping around.
---@param forward boolean
local function jump(forward)
  local buf = vim.api.nvim_get_current_buf()
  local entry = drawn[buf]
  local rows = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buf, M.ns, 0, -1, {})) do
    local hunk = entry and entry.hunks[mark[1]]
    if hunk and hunk.state == "pending" then
      rows[#rows + 1] = mark[2]
    end
  end
  if #rows == 0 then
    return log.info("no pending changes of Tether in this buffer")
  end
  table.sort(rows)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local target = forward and rows[1] or rows[#rows]
  for i = 1, #rows do
    local r = forward and rows[i] or rows[#rows + 1 - i]
    if (forward and r > row) or (not forward and r < row) then
      target = r
      break
    end
  end
  vim.cmd("normal! m'")
  vim.api.nvim_win_set_cursor(0, { target + 1, 0 })
end

function M.next_hunk()
  jump(true)
end

function M.prev_hunk()
  jump(false)
end

---@param verb "keep"|"undo"
local function settle_hunk(verb)
  if vim.bo.buftype == "quickfix" then -- a quickfix or a location list window
    return M.settle_list_entry(verb)
  end
  local hunk, s = hunk_at_cursor()
  if not hunk or not s then
    return log.info("the cursor is on no change of Tether")
  end
  s:settle_changes(verb, { hunkIds = { hunk.hunkId } })
end

---@param verb "keep"|"undo"
local function settle_file(verb)
  local buf = vim.api.nvim_get_current_buf()
  local entry = drawn[buf]
  if not entry or next(entry.hunks) == nil then
    return log.info("no changes of Tether in this buffer")
  end
  entry.session:settle_changes(verb, { uri = vim.uri_from_bufnr(buf) })
end

function M.keep_hunk()
  settle_hunk("keep")
end

function M.undo_hunk()
  settle_hunk("undo")
end

function M.keep_file()
  settle_file("keep")
end

function M.undo_file()
  settle_file("undo")
end

--- The review list's items: every pending hunk of `s`, in file order.
---@param s tether.Session
---@return vim.quickfix.entry[]
local function list_items(s)
  local items = {}
  for _, file in ipairs(s.state.changes.files or {}) do
    for _, hunk in ipairs(file.hunks) do
      if hunk.state == "pending" then
        items[#items + 1] = {
          filename = vim.uri_to_fname(file.uri),
          lnum = hunk.range and hunk.range.start.line + 1 or 1,
          col = 1,
          text = (hunk.conflict and "[conflict] " or "") .. hunk.summary,
          user_data = { tether_hunk = hunk.hunkId, tether_session = s.id },
        }
      end
    end
  end
  return items
end

---@param info {title: string, context: any}
---@return string? session id of the review list `info` describes
local function review_of(info)
  if info.title == QF_TITLE and type(info.context) == "table" then
    return info.context.tether_session
  end
end

--- The id of the quickfix list that is the review list of `s`, if there is one, anywhere
--- in the quickfix stack (`:colder` does not hide it from updates).
---@param s tether.Session
---@return integer?
local function list_id(s)
  for nr = vim.fn.getqflist({ nr = "$" }).nr, 1, -1 do
    local info = vim.fn.getqflist({ nr = nr, id = 0, title = 0, context = 0 })
    if review_of(info) == s.id then
      return info.id
    end
  end
end

---@param s tether.Session
local function refill(s)
  local id = list_id(s)
  if id then
    vim.fn.setqflist({}, "r", { id = id, items = list_items(s), title = QF_TITLE })
  end
end

--- Keep or undo the hunk of the review list's entry under the cursor.
---@param verb "keep"|"undo"
function M.settle_list_entry(verb)
  local win = vim.api.nvim_get_current_win()
  local loclist = vim.fn.getwininfo(win)[1].loclist == 1
  if loclist or not review_of(vim.fn.getqflist({ title = 0, context = 0 })) then
    return log.info("this list is not Tether's review list (:TetherReview opens it)")
  end
  local index = vim.fn.line(".")
  local item = vim.fn.getqflist()[index]
  local data = item and item.user_data
  if type(data) ~= "table" or not data.tether_hunk then
    return log.info("this entry is no change of Tether")
  end
  local s = attached[data.tether_session]
  if not s then
    return log.warn("the session of this change is not open any more")
  end
  s:settle_changes(verb, { hunkIds = { data.tether_hunk } }, function()
    win = vim.fn.getqflist({ winid = 0 }).winid
    if win ~= 0 then
      local count = vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(win))
      vim.api.nvim_win_set_cursor(win, { math.max(1, math.min(index, count)), 0 })
    end
  end)
end

--- `:TetherReview`: every pending hunk of `s` in the quickfix list, with the keep/undo
--- keys in its window.
---@param s tether.Session
function M.review(s)
  s:refresh_changes(function()
    local items = list_items(s)
    vim.fn.setqflist({}, " ", { title = QF_TITLE, items = items, context = { tether_session = s.id } })
    if #items == 0 then
      return log.info("no pending changes of Tether")
    end
    vim.cmd("botright copen")
    local buf = vim.api.nvim_get_current_buf()
    local keys = config.options.review.keymaps
    for verb, lhs in pairs({ keep = keys.keep_hunk, undo = keys.undo_hunk }) do
      if lhs then
        vim.keymap.set("n", lhs, function()
          M.settle_list_entry(verb)
        end, { buffer = buf, desc = "Tether: " .. verb .. " this change" })
      end
    end
  end)
end

--- How long after the last change in a buffer the hunks' states are asked for again: past
--- Neovim's own `didChange` debounce (150 ms), so the daemon has the text.
M.REFRESH_MS = 400

--- Draw `s`'s hunks as they change, in buffers as they are opened; stop when it is released.
---@param s tether.Session
function M.attach(s)
  attached[s.id] = s
  local group = vim.api.nvim_create_augroup("tether.review." .. s.id, { clear = true })
  vim.api.nvim_create_autocmd("BufWinEnter", {
    group = group,
    callback = function(args)
      if vim.bo[args.buf].buftype == "" and s.state.changes and #s.state.changes.files > 0 then
        local name = vim.api.nvim_buf_get_name(args.buf)
        for _, file in ipairs(s.state.changes.files) do
          if vim.uri_to_fname(file.uri) == name then
            return draw_buffer(s, args.buf)
          end
        end
      end
    end,
  })
  -- The daemon tells a hunk's state from the text (`u` after an undo makes it pending
  -- again, typing in it a conflict): a change in a buffer of a file with hunks asks for the
  -- states again, once typing pauses.
  local files = {} ---@type table<string, true> files that have had hunks
  local timer = assert(vim.uv.new_timer())
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    group = group,
    callback = function(args)
      if files[vim.api.nvim_buf_get_name(args.buf)] then
        timer:start(M.REFRESH_MS, 0, function()
          vim.schedule(function()
            if attached[s.id] then
              s:refresh_changes()
            end
          end)
        end)
      end
    end,
  })
  s:subscribe(function(_, event)
    if event.type == "released" then
      attached[s.id] = nil
      timer:stop()
      timer:close()
      vim.api.nvim_del_augroup_by_id(group)
      for buf, entry in pairs(drawn) do
        if entry.session == s then
          clear(buf)
        end
      end
    elseif event.action.type == "changes" then
      for _, file in ipairs(s.state.changes.files or {}) do
        files[vim.uri_to_fname(file.uri)] = true
      end
      draw(s)
      refill(s)
    end
  end)
  s:refresh_changes()
end

return M
