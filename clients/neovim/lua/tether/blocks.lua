--- Where each conversation item is in the chat buffer, and the writes that keep it so: an
--- item is appended at the end, rewritten in place when it changes (the items below it
--- shift), or, while it is the last one, has streamed text appended. Items are separated by
--- one blank line. Folding reads the ranges (`foldexpr`).

local M = {}

M.hl_ns = vim.api.nvim_create_namespace("tether.headers")
--- Blocks by buffer, for the foldexpr (which only knows the buffer it folds).
---@type table<integer, tether.Blocks>
M.by_buf = {}

---@class tether.BlockRange
---@field key string
---@field row integer 0-based row of the item's first line.
---@field size integer Lines of the item.
---@field head integer Offset of the foldable header within the item.
---@field fold boolean The lines from `head` on fold.
---@field pos integer Index in `order`.
---@field hl? integer Extmark id of the header highlight.

---@class tether.Blocks
---@field buf integer
---@field order tether.BlockRange[] Items from top to bottom.
---@field index table<string, tether.BlockRange> Items by key.
local Blocks = {}
Blocks.__index = Blocks

---@param buf integer
---@return tether.Blocks
function M.new(buf)
  local self = setmetatable({ buf = buf, order = {}, index = {} }, Blocks)
  M.by_buf[buf] = self
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      M.by_buf[buf] = nil
    end,
  })
  return self
end

--- Run `fn` with the buffer writable; the user cannot type into the chat, only we can.
---@param fn fun()
function Blocks:write(fn)
  local bo = vim.bo[self.buf]
  bo.modifiable = true
  local ok, err = pcall(fn)
  bo.modifiable = false
  bo.modified = false
  if not ok then
    error(err, 0)
  end
end

---@return integer
function Blocks:line_count()
  return vim.api.nvim_buf_line_count(self.buf)
end

--- Empty the buffer and forget every range.
function Blocks:clear()
  self:write(function()
    vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, {})
  end)
  vim.api.nvim_buf_clear_namespace(self.buf, M.hl_ns, 0, -1)
  self.order, self.index = {}, {}
end

---@param range tether.BlockRange
---@param hl? string
---@param width integer Length of the header line in bytes.
function Blocks:_highlight(range, hl, width)
  if hl then
    range.hl = vim.api.nvim_buf_set_extmark(self.buf, M.hl_ns, range.row + range.head, 0, {
      id = range.hl,
      end_col = width,
      hl_group = hl,
    })
  elseif range.hl then
    vim.api.nvim_buf_del_extmark(self.buf, M.hl_ns, range.hl)
    range.hl = nil
  end
end

--- Insert item `key` at the end, or rewrite it where it is.
---@param key string
---@param card tether.Card
function Blocks:put(key, card)
  local lines = card.lines
  local range = self.index[key]
  self:write(function()
    -- Ranges are updated before the lines change: Neovim evaluates the foldexpr while the
    -- lines go in, and it must already see where the items are.
    if range then
      local row, old_size = range.row, range.size
      local delta = #lines - old_size
      range.size, range.head, range.fold = #lines, card.head, card.fold
      for i = range.pos + 1, #self.order do
        self.order[i].row = self.order[i].row + delta
      end
      vim.api.nvim_buf_set_lines(self.buf, row, row + old_size, false, lines)
    else
      local first = #self.order == 0
      range = {
        key = key,
        row = first and 0 or self:line_count() + 1,
        size = #lines,
        head = card.head,
        fold = card.fold,
        pos = #self.order + 1,
      }
      self.order[range.pos] = range
      self.index[key] = range
      local out = first and lines or vim.list_extend({ "" }, lines)
      vim.api.nvim_buf_set_lines(self.buf, first and 0 or -1, -1, false, out)
    end
  end)
  self:_highlight(range, card.hl, #(lines[card.head + 1] or ""))
end

--- Append `text` to the last item (which must be `key`): it continues the last line,
--- newlines included.
---@param key string
---@param text string
function Blocks:stream(key, text)
  local range = self.index[key]
  assert(range and range.pos == #self.order, "only the last item streams")
  if text == "" then
    return
  end
  local parts = vim.split(text, "\n", { plain = true })
  self:write(function()
    local last = self:line_count() - 1
    local col = #vim.api.nvim_buf_get_lines(self.buf, last, last + 1, false)[1]
    range.size = range.size + #parts - 1
    vim.api.nvim_buf_set_text(self.buf, last, col, last, col, parts)
  end)
end

--- The range of item `key`.
---@param key string
---@return tether.BlockRange?
function Blocks:range_of(key)
  return self.index[key]
end

--- The row (0-based) of item `key`'s block header.
---@param key string
---@return integer?
function Blocks:row_of(key)
  local range = self.index[key]
  return range and range.row + range.head
end

--- The item whose lines include `row`.
---@param row integer
---@return tether.BlockRange?
function Blocks:block_at(row)
  local lo, hi, found = 1, #self.order, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    if self.order[mid].row <= row then
      found, lo = self.order[mid], mid + 1
    else
      hi = mid - 1
    end
  end
  if found and row < found.row + found.size then
    return found
  end
end

--- `foldexpr` of the chat window: a block's header opens a fold, its body stays in it.
---@return string|integer
function M.foldexpr()
  local self = M.by_buf[vim.api.nvim_get_current_buf()]
  local row = vim.v.lnum - 1
  local range = self and self:block_at(row)
  if not range or not range.fold or row < range.row + range.head then
    return 0
  end
  return row == range.row + range.head and ">1" or 1
end

--- `foldtext`: the header as it is, plus how much is folded away.
---@return string
function M.foldtext()
  local header = vim.fn.getline(vim.v.foldstart)
  return ("%s  [%d lines]"):format(header, vim.v.foldend - vim.v.foldstart)
end

return M
