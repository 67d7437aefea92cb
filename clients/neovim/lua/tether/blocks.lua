--- The chat buffer's text: streamed prose, and folded blocks that are rewritten in place when
--- their status changes (tool calls, thoughts).
---
--- Only this module changes the buffer, so it knows where every block is: a rewrite shifts
--- the blocks below it, everything else is appended at the end. Folding reads these ranges.

local M = {}

M.hl_ns = vim.api.nvim_create_namespace("tether.headers")
--- Blocks by buffer, for the foldexpr (which only knows the buffer it folds).
---@type table<integer, tether.Blocks>
M.by_buf = {}

---@class tether.BlockRange
---@field key string
---@field row integer 0-based row of the header.
---@field size integer Lines, header included.
---@field pos integer Index in `order`.
---@field hl? integer Extmark id of the header highlight.
---@field open? boolean Never folded (a plan to read).

---@class tether.Blocks
---@field buf integer
---@field tail "none"|"text"|"block" What the last line holds: streaming continues only after "text".
---@field order tether.BlockRange[] Blocks from top to bottom.
---@field index table<string, tether.BlockRange> Blocks by key.
local Blocks = {}
Blocks.__index = Blocks

---@param buf integer
---@return tether.Blocks
function M.new(buf)
  local self = setmetatable({ buf = buf, tail = "none", order = {}, index = {} }, Blocks)
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

---@return string
function Blocks:last_line()
  return vim.api.nvim_buf_get_lines(self.buf, -2, -1, false)[1] or ""
end

--- True while the buffer holds only its initial empty line.
---@return boolean
function Blocks:empty()
  return self:line_count() == 1 and vim.api.nvim_buf_get_lines(self.buf, 0, 1, false)[1] == ""
end

--- Append whole lines at the end.
---@param lines string[]
function Blocks:append(lines)
  if #lines == 0 then
    return
  end
  self:write(function()
    if self:empty() then
      vim.api.nvim_buf_set_lines(self.buf, 0, -1, false, lines)
    else
      vim.api.nvim_buf_set_lines(self.buf, -1, -1, false, lines)
    end
  end)
  self.tail = "none"
end

--- Stream `text` onto the end of the buffer: it continues the last line, newlines included.
---@param text string
function Blocks:stream(text)
  if text == "" then
    return
  end
  if self.tail ~= "text" then
    -- Prose after a block or a heading starts its own paragraph.
    self:append(self:last_line() == "" and {} or { "", "" })
  end
  self:write(function()
    local last = self:line_count() - 1
    local col = #vim.api.nvim_buf_get_lines(self.buf, last, last + 1, false)[1]
    vim.api.nvim_buf_set_text(self.buf, last, col, last, col, vim.split(text, "\n", { plain = true }))
  end)
  self.tail = "text"
end

--- Insert the block `key` at the end, or rewrite it where it is.
---@param key string
---@param header string
---@param body string[]
---@param hl? string Highlight group of the header line.
---@param open? boolean Keep the block unfolded.
function Blocks:put(key, header, body, hl, open)
  local lines = { header }
  vim.list_extend(lines, body)
  local range = self.index[key]
  local is_new = range == nil
  self:write(function()
    -- Ranges are updated before the lines change: Neovim evaluates the foldexpr while the
    -- lines go in, and it must already see where the blocks are.
    if range then
      local row, old_size = range.row, range.size
      local delta = #lines - old_size
      range.size = #lines
      for i = range.pos + 1, #self.order do
        self.order[i].row = self.order[i].row + delta
      end
      vim.api.nvim_buf_set_lines(self.buf, row, row + old_size, false, lines)
    else
      local empty = self:empty()
      local gap = not empty and self:last_line() ~= "" -- a blank line above every block
      range = {
        key = key,
        row = empty and 0 or self:line_count() + (gap and 1 or 0),
        size = #lines,
        pos = #self.order + 1,
      }
      self.order[range.pos] = range
      self.index[key] = range
      range.open = open
      if gap then
        table.insert(lines, 1, "")
      end
      vim.api.nvim_buf_set_lines(self.buf, empty and 0 or -1, -1, false, lines)
    end
    if hl then
      range.hl = vim.api.nvim_buf_set_extmark(self.buf, M.hl_ns, range.row, 0, {
        id = range.hl,
        end_col = #header,
        hl_group = hl,
      })
    end
  end)
  if is_new then
    self.tail = "block"
  end
end

--- The row (0-based) of block `key`'s header.
---@param key string
---@return integer?
function Blocks:row_of(key)
  return self.index[key] and self.index[key].row
end

--- The block whose lines include `row`.
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
  if not range or range.size < 2 or range.open then
    return 0
  end
  return row == range.row and ">1" or 1
end

--- `foldtext`: the header as it is, plus how much is folded away.
---@return string
function M.foldtext()
  local header = vim.fn.getline(vim.v.foldstart)
  return ("%s  [%d lines]"):format(header, vim.v.foldend - vim.v.foldstart)
end

return M
