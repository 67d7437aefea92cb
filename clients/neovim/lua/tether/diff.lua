--- A read-only float with what a question is about (the unified diff of an edit, or a plan),
--- shown while the user decides. It never takes the cursor, so the picker keeps the focus,
--- and it stays clear of the bottom rows, where the built-in picker lists the choices.

local render = require("tether.render")

local M = {}

---@param content tether.ToolContent[]?
---@param root? string
---@return string[] lines of all diffs, empty when there is none
function M.lines(content, root)
  local out = {}
  for _, item in ipairs(content or {}) do
    if item.type == "diff" then
      out[#out + 1] = ("--- %s"):format(render.short_path(item.uri or "?", root))
      local diff = render.diff(item.oldText, item.newText, item.line)
      vim.list_extend(out, vim.split((diff:gsub("\n$", "")), "\n", { plain = true }))
    end
  end
  return out
end

--- Open a preview of `lines`; returns the window (close it with `M.close`).
---@param title string
---@param lines string[]
---@param filetype string
---@param reserve? integer Rows to leave free at the bottom of the screen.
---@return integer?
function M.preview(title, lines, filetype, reserve)
  if #lines == 0 then
    return nil
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].filetype = filetype
  if filetype == "markdown" then
    require("tether.markdown").attach(buf)
  end
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = "wipe"
  local width = math.min(math.max(40, math.floor(vim.o.columns * 0.7)), vim.o.columns - 4)
  -- Row 1, a border above and below, and the reserved rows plus the command line below.
  local room = vim.o.lines - vim.o.cmdheight - (reserve or 0) - 4
  local height = math.max(1, math.min(#lines, room, math.max(3, math.floor(vim.o.lines * 0.6))))
  local opts = {
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
  }
  if #lines > height then
    opts.footer, opts.footer_pos = (" %d more lines "):format(#lines - height), "right"
  end
  local win = vim.api.nvim_open_win(buf, false, opts)
  vim.wo[win].wrap = filetype == "markdown"
  vim.wo[win].conceallevel = 2
  return win
end

--- The diff of an edit question, or nil when it carries no diff.
---@param title string
---@param content tether.ToolContent[]?
---@param root? string
---@param reserve? integer
---@return integer?
function M.open(title, content, root, reserve)
  return M.preview(title, M.lines(content, root), "diff", reserve)
end

---@param win integer?
function M.close(win)
  if win and vim.api.nvim_win_is_valid(win) then
    vim.api.nvim_win_close(win, true)
  end
end

return M
