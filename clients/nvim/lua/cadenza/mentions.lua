-- Completion in the chat's prompt (an 'omnifunc', so completion plugins with an omni source
-- apply): `@path` mentions of workspace files, `@buffer` (the buffer the chat was opened
-- from), and `/name` commands from the server (cadenza.listCommands). On sending, the
-- mentioned files become the prompt's `context.files`.
local M = {}

local api = vim.api

--- At most this many workspace files are offered (a huge tree must not stall the prompt).
M.MAX_FILES = 5000
--- Folders never walked for candidates.
local SKIP = { [".git"] = true, node_modules = true, [".venv"] = true, __pycache__ = true }

local function real(path)
  return vim.uv.fs_realpath(path) or vim.fs.normalize(path)
end

local function relative(path, root)
  local prefix = root:sub(-1) == "/" and root or root .. "/"
  if path:sub(1, #prefix) == prefix then
    return path:sub(#prefix + 1)
  end
end

local function is_file(path)
  local stat = vim.uv.fs_stat(path)
  return stat ~= nil and stat.type == "file"
end

--- The file of the buffer a chat was opened from, when it is a file.
---@param bufnr integer?
---@return string?
function M.buffer_file(bufnr)
  if not bufnr or not api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return nil
  end
  local name = api.nvim_buf_get_name(bufnr)
  return name ~= "" and real(name) or nil
end

--- Workspace files relative to `root`: open buffers first, then the tree (hidden folders and
--- dependency folders skipped), at most MAX_FILES.
---@param root string
---@return string[]
function M.files(root)
  local seen, out = {}, {}
  local function add(rel)
    if rel and not seen[rel] and #out < M.MAX_FILES then
      seen[rel] = true
      out[#out + 1] = rel
    end
  end
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local path = vim.bo[buf].buflisted and M.buffer_file(buf)
    if path and is_file(path) then
      add(relative(path, root))
    end
  end
  for name, kind in vim.fs.dir(root, {
    depth = 8,
    skip = function(dir)
      local base = vim.fs.basename(dir)
      return not SKIP[base] and base:sub(1, 1) ~= "."
    end,
  }) do
    if #out >= M.MAX_FILES then
      break
    end
    local base = vim.fs.basename(name)
    if kind == "file" and base:sub(1, 1) ~= "." then
      add(name)
    end
  end
  return out
end

--- Completion items for `base` (what precedes the cursor from "@" or a leading "/").
---@param base string
---@param ctx {root: string, origin: integer?, commands: table[]?}
---@return table[] complete-items
function M.items(base, ctx)
  local out = {}
  if base:sub(1, 1) == "/" then
    local lead = base:sub(2)
    for _, command in ipairs(ctx.commands or {}) do
      if type(command.name) == "string" and command.name:sub(1, #lead) == lead then
        out[#out + 1] = {
          word = "/" .. command.name .. " ",
          abbr = "/" .. command.name,
          menu = type(command.hint) == "string" and command.hint or "",
          info = type(command.description) == "string" and command.description or "",
        }
      end
    end
    return out
  end
  local lead = base:sub(2):lower()
  local origin = M.buffer_file(ctx.origin)
  if origin and ("buffer"):sub(1, #lead) == lead then
    out[#out + 1] = {
      word = "@buffer",
      menu = relative(origin, ctx.root) or origin,
      info = "the buffer you opened the chat from",
    }
  end
  for _, rel in ipairs(M.files(ctx.root)) do
    if lead == "" or rel:lower():find(lead, 1, true) then
      out[#out + 1] = { word = "@" .. rel, menu = "file" }
    end
  end
  return out
end

--- Where the word to complete starts (0-based column), or -3 (no completion) when the cursor
--- is not after "@…" or inside a leading "/command".
---@param line string
---@param col integer cursor column (0-based, bytes)
---@return integer
function M.start_of(line, col)
  local before = line:sub(1, col)
  local at = before:match("()@[^%s@]*$")
  if at and (at == 1 or before:sub(at - 1, at - 1):match("%s")) then
    return at - 1
  end
  if before:match("^/[%w%._%-]*$") then
    return 0
  end
  return -3
end

--- The prompt buffer's 'omnifunc' (see :h complete-functions).
---@param findstart integer
---@param base string
function M.omnifunc(findstart, base)
  local buf = api.nvim_get_current_buf()
  if findstart == 1 then
    local row, col = unpack(api.nvim_win_get_cursor(0))
    local line = api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ""
    -- A "/command" completes on the first line only: that is where the server expands it.
    local start = M.start_of(line, col)
    if start == 0 and line:sub(1, 1) == "/" and row ~= 1 then
      return -3
    end
    return start
  end
  local ctx = vim.b[buf].cadenza_chat or {}
  return M.items(base, {
    root = ctx.root or vim.fn.getcwd(),
    origin = ctx.origin,
    commands = require("cadenza.chat").commands(),
  })
end

--- The files a prompt mentions (`@buffer`, `@path` relative to `root` or absolute), as
--- `file:` URIs in order, once each; mentions of nothing readable are left as text.
---@param text string
---@param root string
---@param origin integer? the chat's buffer of origin (`@buffer`)
---@return string[] uris
---@return string[] names the mentioned files relative to the root, for display
function M.resolve(text, root, origin)
  local uris, names, seen = {}, {}, {}
  for mention in (" " .. text):gmatch("%s@([^%s@]+)") do
    mention = mention:gsub("[%.,;:!?%)]+$", "")
    local path
    if mention == "buffer" then
      path = M.buffer_file(origin)
    elseif mention:sub(1, 1) == "/" then
      path = mention
    else
      path = root .. "/" .. mention
    end
    path = path and is_file(path) and real(path) or nil
    if path and not seen[path] then
      seen[path] = true
      uris[#uris + 1] = vim.uri_from_fname(path)
      names[#names + 1] = relative(path, root) or path
    end
  end
  return uris, names
end

return M
