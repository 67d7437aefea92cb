--- The user commands of `plugin/tether.lua`. Each resolves the workspace root of the current
--- buffer (or of the chat it is called from) and works on that root's current session.

local client = require("tether.client")
local config = require("tether.config")
local log = require("tether.log")
local pickers = require("tether.pickers")
local session = require("tether.session")

local M = {}

---@return string
local function root()
  require("tether").ensure_setup()
  return client.root_for(0)
end

--- The current session, without starting one: for commands that only make sense in one.
---@return tether.Session?
local function current()
  local s = session.current_of(root())
  if not s then
    log.info("no Tether session here yet (:Tether starts one)")
  end
  return s
end

---@param args vim.api.keyset.create_user_command.command_args
function M.Tether(args)
  session.with_session(root(), function(s)
    s.chat:show(args.bang)
  end)
end

---@param args vim.api.keyset.create_user_command.command_args
function M.TetherPrompt(args)
  session.with_session(root(), function(s)
    if args.args == "" then
      session.ask_and_prompt(s)
    else
      session.prompt(s, args.args)
    end
  end)
end

--- A byte column of `line` as a character offset in `encoding`.
---@param line string
---@param col integer
---@param encoding string
---@return integer
local function character(line, col, encoding)
  col = math.min(col, #line)
  if encoding == "utf-8" then
    return col
  end
  local ok, index = pcall(vim.str_utfindex, line, encoding, col, false)
  return ok and index or col
end

--- The range of the command as an LSP range: characterwise when it comes from a `v`
--- selection, whole lines otherwise.
---@param buf integer
---@param args vim.api.keyset.create_user_command.command_args
---@param encoding string
---@return lsp.Range
function M.selection_range(buf, args, encoding)
  local first, last = args.line1 - 1, args.line2 - 1
  local from, to = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if vim.fn.visualmode() == "v" and from[2] - 1 == first and to[2] - 1 == last then
    local start_line = vim.api.nvim_buf_get_lines(buf, first, first + 1, false)[1] or ""
    local end_line = vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ""
    local end_col = math.min(to[3], #end_line) -- '> may be v:maxcol after `$`
    if end_col > 0 then
      end_col = end_col + vim.str_utf_end(end_line, end_col) -- through the last character
    end
    return {
      start = { line = first, character = character(start_line, from[3] - 1, encoding) },
      ["end"] = { line = last, character = character(end_line, end_col, encoding) },
    }
  end
  return { start = { line = first, character = 0 }, ["end"] = { line = last + 1, character = 0 } }
end

---@param args vim.api.keyset.create_user_command.command_args
function M.TetherAddSelection(args)
  local buf = vim.api.nvim_get_current_buf()
  if vim.bo[buf].buftype ~= "" or vim.api.nvim_buf_get_name(buf) == "" then
    return log.warn("the selection must be in a file buffer")
  end
  session.with_session(root(), function(s)
    local c = assert(session.client_of(s))
    ---@type tether.ContentBlock
    local link = { type = "resource_link", uri = vim.uri_from_bufnr(buf) }
    if args.range > 0 then
      link.range = M.selection_range(buf, args, c.offset_encoding)
    end
    -- The daemon reads the text through didOpen/didChange, so the buffer must be attached.
    vim.lsp.buf_attach_client(buf, c.id)
    s.context[#s.context + 1] = link
    s.chat:show()
    s.chat:note(("📎 `%s` goes with the next prompt"):format(require("tether.render").link_label(link, s.root)))
  end)
end

function M.TetherCancel()
  local s = current()
  if s then
    session.cancel(s)
  end
end

function M.TetherSessions()
  pickers.sessions(root())
end

---@param args vim.api.keyset.create_user_command.command_args
function M.TetherMode(args)
  session.with_session(root(), function(s)
    if args.args == "" then
      return pickers.mode(s)
    end
    if not vim.tbl_contains(config.modes, args.args) then
      return log.error(("unknown mode %q (one of %s)"):format(args.args, table.concat(config.modes, ", ")))
    end
    session.set_mode(s, args.args)
  end)
end

function M.TetherRewind()
  local s = current()
  if s then
    pickers.rewind(s)
  end
end

function M.TetherTasks()
  local s = current()
  if s then
    pickers.tasks(s)
  end
end

return M
