--- Diagnostics forwarding: what the user's other language servers and linters report on the
--- buffers the agent edited goes back to the daemon (`tether/diagnostics`), so the agent sees
--- the errors its edits caused. Only edited buffers: the rest is none of the agent's business.

local config = require("tether.config")

local M = {}

--- Buffers the agent edited, per client id.
---@type table<integer, table<integer, true>>
M.touched = {}

local augroup = nil ---@type integer?

--- A byte column as a character offset in the client's position encoding.
---@param buf integer
---@param row integer
---@param col integer
---@param encoding string
---@return integer
local function character(buf, row, col, encoding)
  if encoding == "utf-8" then
    return col
  end
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local ok, index = pcall(vim.str_utfindex, line, encoding, math.min(col, #line), false)
  return ok and index or col
end

--- `vim.diagnostic` entries as LSP diagnostics.
---@param buf integer
---@param encoding string
---@return lsp.Diagnostic[]
function M.to_lsp(buf, encoding)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local end_row = d.end_lnum or d.lnum
    out[#out + 1] = {
      range = {
        start = { line = d.lnum, character = character(buf, d.lnum, d.col, encoding) },
        ["end"] = { line = end_row, character = character(buf, end_row, d.end_col or d.col, encoding) },
      },
      severity = d.severity,
      message = d.message,
      source = d.source,
      code = d.code,
    }
  end
  return out
end

---@param client vim.lsp.Client
---@param buf integer
function M.send(client, buf)
  if not vim.api.nvim_buf_is_loaded(buf) then
    return
  end
  client:notify("tether/diagnostics", {
    uri = vim.uri_from_bufnr(buf),
    diagnostics = M.to_lsp(buf, client.offset_encoding),
  })
end

local function watch()
  if augroup then
    return
  end
  augroup = vim.api.nvim_create_augroup("tether.diagnostics", { clear = true })
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = augroup,
    callback = function(ev)
      for client_id, bufs in pairs(M.touched) do
        local client = vim.lsp.get_client_by_id(client_id)
        if not client or client:is_stopped() then
          M.touched[client_id] = nil
        elseif bufs[ev.buf] then
          M.send(client, ev.buf)
        end
      end
    end,
  })
end

--- The agent edited `buf`: forward its diagnostics from now on (and what it has right now,
--- as the baseline the daemon compares later reports to).
---@param client vim.lsp.Client
---@param buf integer
function M.track(client, buf)
  if not config.options.forward_diagnostics then
    return
  end
  watch()
  M.touched[client.id] = M.touched[client.id] or {}
  if not M.touched[client.id][buf] then
    M.touched[client.id][buf] = true
    M.send(client, buf)
  end
end

return M
