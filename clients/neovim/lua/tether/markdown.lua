--- How the chat looks: Markdown through treesitter when its parser is there (Neovim ships
--- `markdown` and `markdown_inline`; code blocks get their language's highlights by
--- injection, and the fences are concealed), the regex syntax otherwise.
---
--- Diffs matter most in an agent's chat and the `diff` parser is rarely installed, so the
--- `+`/`-` lines of ```diff blocks are coloured by a decoration provider unless that parser
--- exists. It only looks at the lines on screen.

local M = {}

M.ns = vim.api.nvim_create_namespace("tether.markdown")

--- Buffers using treesitter, for the decoration provider.
---@type table<integer, true>
local attached = {}
local provider_set = false

---@param lang string
---@return boolean
function M.has_parser(lang)
  local ok, found = pcall(vim.treesitter.language.add, lang)
  return ok and found == true
end

local DIFF_HL = { ["+"] = "Added", ["-"] = "Removed", ["@"] = "Special" }

--- Rows of ```diff code blocks between `top` and `bot` (0-based, inclusive).
---@param buf integer
---@param top integer
---@param bot integer
---@return integer[]
local function diff_rows(buf, top, bot)
  local ok, parser = pcall(vim.treesitter.get_parser, buf, M.LANG)
  if not ok or not parser then
    return {}
  end
  local tree = parser:parse({ top, bot + 1 })[1]
  if not tree then
    return {}
  end
  local rows = {}
  M._query = M._query
    or vim.treesitter.query.parse(M.LANG, "(fenced_code_block (info_string) @info (code_fence_content) @body)")
  local query = M._query
  local info ---@type string?
  for id, node in query:iter_captures(tree:root(), buf, top, bot + 1) do
    if query.captures[id] == "info" then
      info = vim.treesitter.get_node_text(node, buf)
    elseif info and vim.trim(info) == "diff" then
      local first, _, last = node:range()
      for row = math.max(first, top), math.min(last, bot) do
        rows[#rows + 1] = row
      end
    end
  end
  return rows
end

local function set_provider()
  if provider_set then
    return
  end
  provider_set = true
  local wanted = nil ---@type table<integer, boolean>?
  vim.api.nvim_set_decoration_provider(M.ns, {
    on_win = function(_, _, buf, top, bot)
      if not attached[buf] then
        return false
      end
      wanted = {}
      for _, row in ipairs(diff_rows(buf, top, bot)) do
        wanted[row] = true
      end
      return next(wanted) ~= nil
    end,
    on_line = function(_, _, buf, row)
      if not (wanted and wanted[row]) then
        return
      end
      local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
      local hl = DIFF_HL[line:sub(1, 1)]
      if hl then
        vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, {
          end_row = row + 1,
          hl_group = hl,
          hl_eol = true,
          ephemeral = true,
          priority = 120,
        })
      end
    end,
  })
end

--- The chat's own name for the markdown parser, with Neovim's markdown queries minus
--- `conceal_lines`: Neovim 0.11 scrolls wrongly over lines hidden that way (the last lines
--- of a reply stay below the window while following it). Fences still disappear: their
--- text is concealed, the line stays (blank).
M.LANG = "tether_markdown"
local registered = nil ---@type boolean?

---@return boolean
local function register()
  if registered ~= nil then
    return registered
  end
  registered = false
  local path = vim.api.nvim_get_runtime_file("parser/markdown.so", false)[1]
  if not path or not pcall(vim.treesitter.language.add, M.LANG, { path = path, symbol_name = "markdown" }) then
    return false
  end
  for _, name in ipairs({ "highlights", "injections" }) do
    local parts = {}
    for _, file in ipairs(vim.treesitter.query.get_files("markdown", name)) do
      local fd = io.open(file, "r")
      if fd then
        parts[#parts + 1] = fd:read("*a")
        fd:close()
      end
    end
    local text = table.concat(parts, "\n"):gsub('%(#set! conceal_lines ""%)', "")
    if not pcall(vim.treesitter.query.set, M.LANG, name, text) then
      return false
    end
  end
  registered = true
  return true
end

--- Highlight `buf` as Markdown; returns "treesitter" or "syntax" (what was used).
---@param buf integer
---@return "treesitter"|"syntax"
function M.attach(buf)
  if M.has_parser("markdown") and register() and pcall(vim.treesitter.start, buf, M.LANG) then
    if not M.has_parser("diff") then
      attached[buf] = true
      set_provider()
      vim.api.nvim_create_autocmd("BufWipeout", {
        buffer = buf,
        callback = function()
          attached[buf] = nil
        end,
      })
    end
    return "treesitter"
  end
  vim.bo[buf].syntax = "markdown"
  return "syntax"
end

return M
