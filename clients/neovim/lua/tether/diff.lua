--- A read-only float with the unified diff of a proposed edit, shown while the user decides.
--- It never takes the cursor, so the question (`vim.ui.select`) keeps the focus.

local render = require("tether.render")

local M = {}

---@param content tether.ToolContent[]?
---@return string[] lines of all diffs, empty when there is none
function M.lines(content, root)
  local out = {}
  for _, item in ipairs(content or {}) do
    if item.type == "diff" then
      out[#out + 1] = ("--- %s"):format(render.short_path(item.uri or "?", root))
      local diff = render.diff(item.oldText, item.newText)
      vim.list_extend(out, vim.split((diff:gsub("\n$", "")), "\n", { plain = true }))
    end
  end
  return out
end

--- Open the preview; returns the window (close it with `M.close`), or nil without a diff.
---@param title string
---@param content tether.ToolContent[]?
---@param root? string
---@return integer?
function M.open(title, content, root)
  local lines = M.lines(content, root)
  if #lines == 0 then
    return nil
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = "diff"
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  local width = math.min(math.max(40, math.floor(vim.o.columns * 0.7)), vim.o.columns - 4)
  local height = math.min(#lines, math.max(3, math.floor(vim.o.lines * 0.5)))
  return vim.api.nvim_open_win(buf, false, {
    relative = "editor",
    row = 1,
    col = math.floor((vim.o.columns - width) / 2),
    width = width,
    height = height,
    style = "minimal",
    border = "rounded",
    title = " " .. title .. " ",
    title_pos = "center",
    zindex = 60,
  })
end

---@param win integer?
function M.close(win)
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
end

return M
