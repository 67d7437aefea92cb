--- The user commands of `plugin/tether.lua`. Each resolves the workspace root of the current
--- buffer (or of the chat it is called from) and works on that root's current session.

local app = require("tether.app")
local config = require("tether.config")
local daemon = require("tether.daemon")
local log = require("tether.log")
local pickers = require("tether.pickers")

local M = {}

---@return string
local function root()
  require("tether.config").ensure()
  return daemon.root_for(0)
end

--- The session of the chat the cursor is in, else the current session of the workspace,
--- without starting one: for commands that only make sense in one.
---@return tether.Session?
local function current()
  local registry = app.get()
  local s = registry:of_buffer(vim.api.nvim_get_current_buf()) or registry:current_of(root())
  if not s then
    log.info("no Tether session here yet (:Tether starts one)")
  end
  return s
end

---@param args vim.api.keyset.create_user_command.command_args
function M.Tether(args)
  app.get():with_session(root(), function(s)
    app.chat(s):show(args.bang)
  end)
end

---@param s tether.Session
---@param text string
function M.send(s, text)
  app.chat(s):show()
  s:prompt({ { type = "text", text = text } })
end

---@param args vim.api.keyset.create_user_command.command_args
function M.TetherPrompt(args)
  app.get():with_session(root(), function(s)
    if args.args ~= "" then
      return M.send(s, args.args)
    end
    vim.ui.input({ prompt = "Tether> " }, function(text)
      if text and text ~= "" then
        M.send(s, text)
      end
    end)
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

--- An LSP range from 1-based lines and byte columns (`from_col`/`to_col` nil: whole lines).
--- `to_col` is the column of the last selected character (its first byte), as in marks.
---@param buf integer
---@param line1 integer
---@param line2 integer
---@param from_col? integer
---@param to_col? integer
---@param encoding string
---@return lsp.Range
function M.range(buf, line1, line2, from_col, to_col, encoding)
  local first, last = line1 - 1, line2 - 1
  if not (from_col and to_col) then
    return { start = { line = first, character = 0 }, ["end"] = { line = last + 1, character = 0 } }
  end
  local start_line = vim.api.nvim_buf_get_lines(buf, first, first + 1, false)[1] or ""
  local end_line = vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ""
  local end_col = math.min(to_col, #end_line) -- may be v:maxcol after `$`
  if end_col > 0 then
    end_col = end_col + vim.str_utf_end(end_line, end_col) -- through the last character
  end
  return {
    start = { line = first, character = character(start_line, from_col - 1, encoding) },
    ["end"] = { line = last, character = character(end_line, end_col, encoding) },
  }
end

--- The range of the command: characterwise when it comes from a `v` selection, whole
--- lines otherwise.
---@param buf integer
---@param args vim.api.keyset.create_user_command.command_args
---@param encoding string
---@return lsp.Range
function M.selection_range(buf, args, encoding)
  local from, to = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if vim.fn.visualmode() == "v" and from[2] == args.line1 and to[2] == args.line2 then
    return M.range(buf, args.line1, args.line2, from[3], to[3], encoding)
  end
  return M.range(buf, args.line1, args.line2, nil, nil, encoding)
end

--- Attach `range` of `buf` (nil: the whole file) to the next prompt.
---@param buf integer
---@param range_of? fun(encoding: string): lsp.Range
local function attach(buf, range_of)
  if vim.bo[buf].buftype ~= "" or vim.api.nvim_buf_get_name(buf) == "" then
    return log.warn("the selection must be in a file buffer")
  end
  app.get():with_session(root(), function(s)
    local c = assert(s:client())
    ---@type tether.ContentBlock
    local link = { type = "resource_link", uri = vim.uri_from_bufnr(buf) }
    if range_of then
      link.range = range_of(c.offset_encoding)
    end
    -- The daemon reads the text through didOpen/didChange, so the buffer must be attached.
    vim.lsp.buf_attach_client(buf, c.id)
    s:dispatch({ type = "context", link = link })
    app.chat(s):show()
    s:dispatch({
      type = "note",
      level = "info",
      text = ("📎 `%s` goes with the next prompt"):format(require("tether.render").link_label(link, s.root)),
    })
  end)
end

---@param args vim.api.keyset.create_user_command.command_args
function M.TetherAddSelection(args)
  local buf = vim.api.nvim_get_current_buf()
  attach(buf, args.range > 0 and function(encoding)
    return M.selection_range(buf, args, encoding)
  end or nil)
end

--- The visual selection, from a mapping that runs in visual mode (`<Cmd>`, `<Plug>`):
--- exactly the characters selected with `v`, whole lines with `V` (and CTRL-V).
function M.add_visual()
  local buf = vim.api.nvim_get_current_buf()
  local mode = vim.fn.mode()
  local a, b = vim.fn.getpos("v"), vim.fn.getpos(".")
  if a[2] > b[2] or (a[2] == b[2] and a[3] > b[3]) then
    a, b = b, a
  end
  vim.api.nvim_feedkeys(vim.keycode("<Esc>"), "nx", false)
  local charwise = mode == "v"
  attach(buf, function(encoding)
    return M.range(buf, a[2], b[2], charwise and a[3] or nil, charwise and b[3] or nil, encoding)
  end)
end

function M.TetherCancel()
  local s = current()
  if s then
    s:cancel()
  end
end

function M.TetherSessions()
  pickers.sessions(root())
end

---@param args vim.api.keyset.create_user_command.command_args
function M.TetherMode(args)
  app.get():with_session(root(), function(s)
    if args.args == "" then
      return pickers.mode(s)
    end
    if not vim.tbl_contains(config.modes, args.args) then
      local hint = config.suggest(args.args, config.modes)
      return log.error(("unknown mode %q (one of %s)%s"):format(
        args.args,
        table.concat(config.modes, ", "),
        hint and (" — did you mean %s?"):format(hint) or ""
      ))
    end
    s:set_mode(args.args)
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

--- The review list: every pending change of the session's turns in the quickfix list.
function M.TetherReview()
  local s = current()
  if s then
    require("tether.review").review(s)
  end
end

--- A review key (`<Plug>(tether-next-hunk)`, …): in a buffer with changed hunks, or in the
--- review list.
---@param action "next_hunk"|"prev_hunk"|"keep_hunk"|"undo_hunk"|"keep_file"|"undo_file"
function M.review_key(action)
  config.ensure()
  require("tether.review")[action]()
end

--- Ask the oldest open question with `vim.ui.select` (the user asked for a list).
function M.TetherAnswer()
  local s = current()
  if not s then
    return
  end
  local q = require("tether.state").open_questions(s.state)[1]
  if not q then
    return log.info("no question is waiting for an answer")
  end
  local chat = app.chat(s)
  chat:show()
  require("tether.questions").select(chat, q)
end

--- A question key (`<Plug>(tether-allow)` …) pressed: it answers in the chat only.
---@param action string
function M.question_key(action)
  local s = app.get():of_buffer(vim.api.nvim_get_current_buf())
  if not s or vim.b.tether_role ~= "chat" then
    return log.info("questions are answered in the chat (:Tether shows it)")
  end
  require("tether.questions").press(app.chat(s), action, vim.api.nvim_get_current_win())
end

function M.TetherRestart()
  app.get():restart(root(), function(s)
    if s then
      app.chat(s):show()
    end
  end)
end

---@param args vim.api.keyset.create_user_command.command_args
function M.TetherInstall(args)
  require("tether.install").run(nil, args.bang)
end

return M
