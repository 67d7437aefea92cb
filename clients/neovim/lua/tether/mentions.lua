--- `@path` (a workspace file) and `#name` (an open buffer) in a prompt: completion in the
--- prompt area, and the resource links they become when the prompt is sent. The daemon
--- reads a linked file through the editor, so an open buffer's unsaved text is what it sees.

local M = {}

local MAX_FILES = 5000

--- Workspace files, relative to `root`: `git ls-files` when it is a repository (respects
--- .gitignore), else a bounded walk that skips hidden folders.
---@param root string
---@return string[]
function M.files(root)
  local git = vim.system({ "git", "ls-files", "--cached", "--others", "--exclude-standard" }, {
    cwd = root,
    text = true,
  }):wait(3000)
  if git.code == 0 and git.stdout then
    local out = vim.split(vim.trim(git.stdout), "\n", { trimempty = true })
    return vim.list_slice(out, 1, MAX_FILES)
  end
  local out = {}
  for name, kind in vim.fs.dir(root, {
    depth = 8,
    skip = function(dir)
      return not vim.startswith(vim.fs.basename(dir), ".") and vim.fs.basename(dir) ~= "node_modules"
    end,
  }) do
    if kind == "file" then
      out[#out + 1] = name
      if #out >= MAX_FILES then
        break
      end
    end
  end
  return out
end

--- Loaded file buffers as {name relative to root when inside it, buf}.
---@param root string
---@return {name: string, buf: integer}[]
function M.buffers(root)
  local out = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" and name ~= "" then
      out[#out + 1] = { name = require("tether.render").relative(name, root), buf = buf }
    end
  end
  return out
end

--- The root of the session the prompt area belongs to.
---@return string
local function current_root()
  return vim.b.tether_root or require("tether.daemon").root_for(0)
end

--- 'omnifunc' of the prompt area.
---@param findstart integer
---@param base string
---@return integer|table
function M.omnifunc(findstart, base)
  if findstart == 1 then
    local line = vim.api.nvim_get_current_line():sub(1, vim.fn.col(".") - 1)
    local start = line:find("[@#][^%s@#]*$")
    if not start or (start > 1 and not line:sub(start - 1, start - 1):match("%s")) then
      return -3 -- not a mention: leave completion mode quietly
    end
    return start - 1
  end
  local sigil, typed = base:sub(1, 1), base:sub(2):lower()
  local root = current_root()
  local items = {}
  local function offer(word, menu)
    if typed == "" or word:lower():find(typed, 1, true) then
      items[#items + 1] = { word = sigil .. word, menu = menu }
    end
  end
  if sigil == "@" then
    for _, path in ipairs(M.files(root)) do
      offer(path, "[file]")
    end
  else
    for _, b in ipairs(M.buffers(root)) do
      offer(b.name, vim.bo[b.buf].modified and "[buffer, unsaved]" or "[buffer]")
    end
  end
  return items
end

--- Open the completion menu right after `@` or `#` is typed at the start of a word.
---@param char string
function M.maybe_complete(char)
  if char ~= "@" and char ~= "#" then
    return
  end
  local before = vim.api.nvim_get_current_line():sub(1, vim.fn.col(".") - 1)
  if before ~= "" and not before:sub(-1):match("%s") then
    return
  end
  vim.schedule(function()
    if vim.fn.mode() == "i" and vim.fn.pumvisible() == 0 then
      vim.api.nvim_feedkeys(vim.keycode("<C-x><C-o>"), "n", false)
    end
  end)
end

---@param path string
---@return boolean
local function is_file(path)
  local stat = vim.uv.fs_stat(path)
  return stat ~= nil and stat.type == "file"
end

--- The resource links of the mentions in `text`: `@path` (relative to the workspace, or
--- absolute inside it) when the file exists, `#name` when a buffer has that name. Buffers
--- are attached to the session's daemon so it reads their live text.
---@param text string
---@param s tether.Session
---@return tether.ContentBlock[]
function M.resolve(text, s)
  local links, seen = {}, {}
  local function add(uri, buf)
    if not seen[uri] then
      seen[uri] = true
      links[#links + 1] = { type = "resource_link", uri = uri }
      local c = buf and s:client()
      if c then
        vim.lsp.buf_attach_client(buf, c.id)
      end
    end
  end
  for sigil, word in (" " .. text):gmatch("%s([@#])([^%s]+)") do
    word = word:gsub("[%.,;:!?%)]+$", "") -- trailing punctuation is prose, not path
    if sigil == "@" then
      local path = vim.startswith(word, "/") and word or vim.fs.joinpath(s.root, word)
      path = vim.fs.normalize(path)
      if vim.startswith(path, s.root .. "/") and is_file(path) then
        local buf = vim.fn.bufnr(path)
        add(vim.uri_from_fname(path), buf > 0 and vim.api.nvim_buf_is_loaded(buf) and buf or nil)
      end
    else
      for _, b in ipairs(M.buffers(s.root)) do
        if b.name == word then
          add(vim.uri_from_bufnr(b.buf), b.buf)
        end
      end
    end
  end
  return links
end

return M
