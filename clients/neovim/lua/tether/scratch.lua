--- Tether's own buffers (chat, prompt area, todo list): scratch buffers that remember the
--- session and workspace they belong to (`b:tether_session`, `b:tether_root`) and their
--- role, which is how windows and commands find them.

local M = {}

---@param s tether.Session
---@param role "chat"|"input"|"plan"
---@param name string
---@return integer buf
function M.buffer(s, role, name)
  local buf = vim.api.nvim_create_buf(false, true)
  if not pcall(vim.api.nvim_buf_set_name, buf, name) then
    pcall(vim.api.nvim_buf_set_name, buf, name .. "-" .. buf)
  end
  local bo = vim.bo[buf]
  bo.buftype = "nofile"
  bo.bufhidden = "hide"
  bo.swapfile = false
  vim.b[buf].tether_root = s.root
  vim.b[buf].tether_session = s.id
  vim.b[buf].tether_role = role
  return buf
end

return M
