--- The prompts sent from each workspace, kept across Neovim runs (`stdpath("state")/tether/
--- history/`, one JSON file per workspace root), for `<Up>`/`<Down>` in the prompt area.
--- Read once per workspace; each sent prompt is merged into what is on disk (another Neovim
--- may have added some) and written back whole, atomically.

local M = {}

--- Prompts kept per workspace.
M.MAX = 500

--- Prompts by root, oldest first, as read or sent in this Neovim.
---@type table<string, string[]>
local cache = {}

---@param root string
---@return string
function M.path(root)
  local name = vim.fn.sha256(root):sub(1, 16) .. ".json"
  return vim.fs.joinpath(vim.fn.stdpath("state") --[[@as string]], "tether", "history", name)
end

---@param path string
---@return string[]
local function read(path)
  local fd = io.open(path, "r")
  if not fd then
    return {}
  end
  local text = fd:read("*a")
  fd:close()
  local ok, data = pcall(vim.json.decode, text)
  if not ok or type(data) ~= "table" or type(data.prompts) ~= "table" then
    return {}
  end
  return vim.tbl_filter(function(p)
    return type(p) == "string"
  end, data.prompts)
end

--- The prompts sent from `root`, oldest first.
---@param root string
---@return string[]
function M.list(root)
  if not cache[root] then
    cache[root] = read(M.path(root))
  end
  return cache[root]
end

--- Remember `text` as the newest prompt of `root` (an immediate repeat is kept once).
---@param root string
---@param text string
function M.add(root, text)
  local path = M.path(root)
  local list = read(path)
  if list[#list] ~= text then
    list[#list + 1] = text
  end
  while #list > M.MAX do
    table.remove(list, 1)
  end
  cache[root] = list
  vim.fn.mkdir(vim.fs.dirname(path), "p", 448) -- 0700: prompts are the user's own
  local tmp = path .. ".tmp" .. vim.uv.os_getpid()
  -- 0600 from the start (O_EXCL: no file planted at the temporary name is followed).
  local fd = vim.uv.fs_open(tmp, "wx", 384)
  if not fd then
    return
  end
  vim.uv.fs_write(fd, vim.json.encode({ root = root, prompts = list }))
  vim.uv.fs_close(fd)
  vim.uv.fs_rename(tmp, path)
end

--- Forget what was read (tests: as if Neovim started again).
function M.reset()
  cache = {}
end

return M
