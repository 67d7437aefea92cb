--- Agent edits: `workspace/applyEdit` into the buffers, and `tether/saveDocuments` after it.
---
--- We keep Neovim's own applier (`vim.lsp.util.apply_workspace_edit`) but wrap it for three
--- reasons: Neovim answers `applied = true` for an edit against an older buffer version it
--- silently skipped, so we refuse stale edits ourselves; an agent edit gets its own undo
--- block, so `u` reverts exactly the agent's change and not the user's typing before it; and
--- the edited buffers are remembered for diagnostics forwarding.

local M = {}

--- Buffers that had unsaved changes of the user's when an agent edit landed in them: the
--- save that follows writes those changes too (`:help tether-saving`).
---@type table<integer, true>
local unsaved_before = {}

---@class tether.EditTarget
---@field buf integer
---@field version integer?

---@param edit lsp.WorkspaceEdit
---@return tether.EditTarget[]
local function targets(edit)
  local out = {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if not change.kind and change.textDocument then
      local doc = change.textDocument
      out[#out + 1] = { buf = vim.uri_to_bufnr(doc.uri), version = doc.version ~= vim.NIL and doc.version or nil }
    end
  end
  for uri in pairs(edit.changes or {}) do
    out[#out + 1] = { buf = vim.uri_to_bufnr(uri) }
  end
  return out
end

--- Did the user change the buffer after the version the edit was made for?
---@param target tether.EditTarget
---@return boolean
local function stale(target)
  if not target.version or not vim.api.nvim_buf_is_loaded(target.buf) then
    return false
  end
  return (vim.lsp.util.buf_versions[target.buf] or 0) > target.version
end

--- A buffer with no text: Neovim shows it as one empty line, which the file does not have.
---@param buf integer
---@return boolean
local function is_empty(buf)
  return vim.api.nvim_buf_is_loaded(buf)
    and vim.api.nvim_buf_line_count(buf) == 1
    and vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
end

--- Text inserted into an empty buffer keeps that buffer's one empty line after it. The text
--- ends with its own newline (it is the whole file), so that line would become an extra
--- blank line at the end of the file: drop it.
---@param buf integer
local function drop_phantom_line(buf)
  local count = vim.api.nvim_buf_line_count(buf)
  if count > 1 and vim.api.nvim_buf_get_lines(buf, count - 1, count, false)[1] == "" then
    vim.api.nvim_buf_set_lines(buf, count - 1, count, false, {})
  end
end

--- Close the current undo block of `buf`, so the next change starts a new one.
---@param buf integer
local function break_undo(buf)
  if vim.api.nvim_buf_is_loaded(buf) then
    vim.api.nvim_buf_call(buf, function()
      vim.cmd("let &l:undolevels = &l:undolevels")
    end)
  end
end

---@param params lsp.ApplyWorkspaceEditParams
---@param ctx lsp.HandlerContext
---@return lsp.ApplyWorkspaceEditResult
function M.apply_edit(params, ctx)
  local client = assert(vim.lsp.get_client_by_id(ctx.client_id))
  local list = targets(params.edit)
  for _, target in ipairs(list) do
    if stale(target) then
      -- Our didChange may still be in the debounce window: send it now, before the answer,
      -- so the daemon re-reads the text the user actually has.
      pcall(function()
        require("vim.lsp._changetracking").flush(client, target.buf)
      end)
      return { applied = false, failureReason = "the buffer changed since the agent read it" }
    end
  end
  local empty = {} ---@type table<integer, boolean>
  for _, target in ipairs(list) do
    if vim.api.nvim_buf_is_loaded(target.buf) and vim.bo[target.buf].modified then
      unsaved_before[target.buf] = true
    end
    break_undo(target.buf)
    if vim.api.nvim_buf_is_loaded(target.buf) then
      empty[target.buf] = is_empty(target.buf)
    else -- a new file, or one not open: Neovim loads it while applying
      empty[target.buf] = vim.fn.getfsize(vim.api.nvim_buf_get_name(target.buf)) <= 0
    end
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, params.edit, client.offset_encoding)
  for _, target in ipairs(list) do
    if ok and empty[target.buf] then
      drop_phantom_line(target.buf)
    end
    break_undo(target.buf)
    require("tether.diagnostics").track(client, target.buf)
  end
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  return { applied = true }
end

--- Write the buffers of `uris` (after an agent edit), running the user's write autocmds.
--- The whole buffer is written: the agent's commands must see its edit on disk, and a
--- partial write would leave buffer and file disagreeing. Also returns the files whose
--- write carried unsaved changes of the user's, so the chat can say so.
---@param params {uris: string[]}
---@return any result, lsp.ResponseError? err, string[] with_user_changes
function M.save_documents(params, _)
  local failed, with_user_changes = {}, {}
  for _, uri in ipairs(params.uris or {}) do
    local buf = vim.uri_to_bufnr(uri)
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
        vim.cmd("silent keepalt write")
      end)
      if not ok then
        failed[#failed + 1] = ("%s: %s"):format(vim.uri_to_fname(uri), err)
      elseif unsaved_before[buf] then
        with_user_changes[#with_user_changes + 1] = uri
      end
    end
    unsaved_before[buf] = nil
  end
  if #failed > 0 then
    -- The daemon then writes the files itself, so buffer and disk still agree.
    local err = vim.lsp.rpc.rpc_response_error(vim.lsp.protocol.ErrorCodes.InternalError, table.concat(failed, "; "))
    return nil, err, with_user_changes
  end
  return vim.NIL, nil, with_user_changes
end

return M
