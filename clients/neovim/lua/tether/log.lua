--- Messages to the user. Everything goes through a scheduled `vim.notify`, because most of it
--- happens inside LSP callbacks where notifying directly could run in a fast event.

local M = {}

--- JSON-RPC error codes the daemon uses on purpose (docs/protocol.md "Errors").
---@enum tether.ErrorCode
M.codes = {
  invalid_params = -32602,
  method_not_found = -32601,
  request_cancelled = -32800,
  server_not_initialized = -32002,
}

local notify = vim.schedule_wrap(function(msg, level)
  vim.notify("[tether] " .. msg, level, { title = "tether" })
end)

---@param msg string
function M.info(msg)
  notify(msg, vim.log.levels.INFO)
end

---@param msg string
function M.warn(msg)
  notify(msg, vim.log.levels.WARN)
end

---@param msg string
function M.error(msg)
  notify(msg, vim.log.levels.ERROR)
end

--- A cancelled request is the user's own doing, not worth more than a debug line.
---@param code integer?
---@return integer
function M.level_for_code(code)
  if code == M.codes.request_cancelled then
    return vim.log.levels.DEBUG
  end
  return vim.log.levels.ERROR
end

--- Report an error from the daemon (an `lsp.ResponseError`) with what we were doing.
---@param doing string
---@param err lsp.ResponseError|string
function M.rpc_error(doing, err)
  if type(err) == "string" then
    notify(doing .. ": " .. err, vim.log.levels.ERROR)
    return
  end
  notify(("%s: %s"):format(doing, err.message or vim.inspect(err)), M.level_for_code(err.code))
end

return M
