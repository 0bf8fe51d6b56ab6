-- Review of a turn's changes, after the fact (cadenza.listChanges / cadenza.reviewChanges):
-- each pending hunk is shown in its buffer (the new lines highlighted with a sign, the old
-- ones as virtual lines above), with buffer-local keys to keep or undo the hunk under the
-- cursor or the whole file. Undoing goes through the server, so its checkpoints stay true
-- and the model hears on its next turn what was undone.
local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("cadenza.review")

local state = {
  session_id = nil, ---@type string?
  client_id = nil, ---@type integer?
  files = {}, ---@type table[] listChanges' files
  mapped = {}, ---@type table<integer, boolean> buffers with the review keys
}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

local function define_highlights()
  local links = {
    CadenzaReviewAdd = "DiffAdd",
    CadenzaReviewDelete = "DiffDelete",
    CadenzaReviewSign = "DiffChange",
    CadenzaReviewHint = "Comment",
  }
  for group, target in pairs(links) do
    api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

local function loaded_buf(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  local buf = ok and vim.fn.bufnr(fname) or -1
  if buf ~= -1 and api.nvim_buf_is_loaded(buf) then
    return buf
  end
end

--- The 0-based rows a hunk's new text covers: first, last (last < first: no new lines).
---@param hunk table
---@return integer first
---@return integer last
function M.rows(hunk)
  local first, last = hunk.range.start.line, hunk.range["end"].line
  if hunk.range["end"].character == 0 and last > first then
    last = last - 1
  end
  if hunk.newText == "" then
    last = first - 1
  end
  return first, last
end

local function split_text(text)
  local lines = vim.split(text or "", "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines
end

--- A file's hunks still to review. A hunk without `range` (the person changed the file at it
--- since) can no longer be undone, so it is not offered.
local function pending(file)
  local out = {}
  for _, hunk in ipairs(file.hunks or {}) do
    if hunk.state == "pending" and type(hunk.range) == "table" then
      out[#out + 1] = hunk
    end
  end
  return out
end

--- A key as the person types it: <LocalLeader> and <Leader> replaced by theirs.
---@param lhs string|false
---@return string|false
function M.key_name(lhs)
  if not lhs then
    return false
  end
  local function leader(value)
    value = type(value) == "string" and value ~= "" and value or "\\"
    return value == " " and "<Space>" or value
  end
  local named = lhs:gsub("<[Ll]ocal[Ll]eader>", function()
    return leader(vim.g.maplocalleader)
  end)
  return (named:gsub("<[Ll]eader>", function()
    return leader(vim.g.mapleader)
  end))
end

--- The review keys as the person types them: {keep = "<Space>k", ...} (false: unmapped).
---@return table<string, string|false>
function M.keys_named()
  local out = {}
  for name, lhs in pairs(require("cadenza.config").options.review.keys) do
    out[name] = M.key_name(lhs)
  end
  return out
end

local function key_hint()
  local keys = M.keys_named()
  local parts = {}
  if keys.keep then
    parts[#parts + 1] = keys.keep .. " keep"
  end
  if keys.undo then
    parts[#parts + 1] = keys.undo .. " undo"
  end
  return #parts > 0 and ("  Cadenza: " .. table.concat(parts, " · ")) or "  Cadenza: change"
end

local function draw_hunk(buf, hunk)
  local count = api.nvim_buf_line_count(buf)
  local first, last = M.rows(hunk)
  local anchor = math.min(first, count - 1)
  local old = {}
  for _, line in ipairs(split_text(hunk.oldText)) do
    old[#old + 1] = { { "- " .. line, "CadenzaReviewDelete" } }
  end
  api.nvim_buf_set_extmark(buf, ns, anchor, 0, {
    virt_lines = #old > 0 and old or nil,
    virt_lines_above = first < count,
    virt_text = { { key_hint(), "CadenzaReviewHint" } },
    sign_text = last >= first and "+" or "-",
    sign_hl_group = "CadenzaReviewSign",
  })
  for row = first, math.min(last, count - 1) do
    api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = "CadenzaReviewAdd", sign_text = "+", sign_hl_group = "CadenzaReviewSign" })
  end
end

local function unmap(buf)
  if not state.mapped[buf] then
    return
  end
  state.mapped[buf] = nil
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  for _, lhs in pairs(require("cadenza.config").options.review.keys) do
    if lhs then
      pcall(vim.keymap.del, "n", lhs, { buffer = buf })
    end
  end
end

local function map(buf)
  if state.mapped[buf] then
    return
  end
  state.mapped[buf] = true
  local keys = require("cadenza.config").options.review.keys
  local actions = {
    keep = { M.keep_hunk, "keep the change under the cursor" },
    undo = { M.undo_hunk, "undo the change under the cursor" },
    keep_file = { M.keep_file, "keep every change in this file" },
    undo_file = { M.undo_file, "undo every change in this file" },
    next = { M.next_hunk, "the next change to review" },
    prev = { M.prev_hunk, "the previous change to review" },
  }
  for name, action in pairs(actions) do
    if keys[name] then
      vim.keymap.set("n", keys[name], action[1], { buffer = buf, desc = "Cadenza: " .. action[2] })
    end
  end
end

--- Show `files` (listChanges' shape) in their buffers; what is no longer pending disappears.
---@param files table[]
function M.render(files)
  define_highlights()
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_valid(buf) then
      api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    end
  end
  local keep_mapped = {}
  for _, file in ipairs(files) do
    local buf = loaded_buf(file.uri)
    local hunks = pending(file)
    if buf and #hunks > 0 then
      for _, hunk in ipairs(hunks) do
        draw_hunk(buf, hunk)
      end
      map(buf)
      keep_mapped[buf] = true
    end
  end
  for buf in pairs(state.mapped) do
    if not keep_mapped[buf] then
      unmap(buf)
    end
  end
end

--- Forget the review (a new turn began, or the server is gone).
function M.clear()
  state.files = {}
  M.render({})
end

--- A session's next turn began: its last turn's review no longer applies.
---@param session cadenza.Session
function M.turn_started(session)
  if state.session_id == session.id then
    M.clear()
  end
end

--- Every pending hunk of the review, per file: {{path, count}}.
---@return {path: string, count: integer}[]
function M.summary()
  local out = {}
  for _, file in ipairs(state.files) do
    local count = #pending(file)
    if count > 0 then
      out[#out + 1] = { path = file.path or vim.uri_to_fname(file.uri), count = count }
    end
  end
  return out
end

--- The review's files (listChanges' shape), for tests and statuslines.
---@return table[]
function M.files()
  return state.files
end

local function client()
  local c = state.client_id and vim.lsp.get_client_by_id(state.client_id)
  if c and not require("cadenza.compat").is_stopped(c) then
    return c
  end
end

local function accept(result)
  if type(result) == "table" and type(result.files) == "table" then
    state.files = result.files
    M.render(state.files)
  end
end

--- Ask the server for the session's latest turn's changes and show them.
---@param session cadenza.Session
---@param on_done? fun(files: table[], result: table)
function M.show(session, on_done)
  local c = vim.lsp.get_client_by_id(session.client_id)
  if not c then
    return
  end
  local client_mod = require("cadenza.client")
  local command = "cadenza.listChanges"
  client_mod.execute(c, command, { sessionId = session.id }, function(err, result)
    if err then
      if not client_mod.is_unsupported(c, command, err) then
        notify("could not list the changes: " .. require("cadenza.errors").text(err), vim.log.levels.WARN)
      end
      return
    end
    state.session_id, state.client_id = session.id, c.id
    accept(result)
    if on_done then
      on_done(state.files, type(result) == "table" and result or {})
    end
  end)
end

--- Send a review action for `hunks` / `uris` (neither: every pending hunk of the turn).
---@param action "keep"|"undo"
---@param target {hunks?: string[], uris?: string[]}
function M.act(action, target)
  local c = client()
  if not c or not state.session_id then
    notify("no changes to review", vim.log.levels.WARN)
    return
  end
  local argument = vim.tbl_extend("force", { sessionId = state.session_id, action = action }, target)
  require("cadenza.client").execute(c, "cadenza.reviewChanges", argument, function(err, result)
    if err then
      -- The server's refusal is a sentence already ("cannot undo: app.py changed at that
      -- change since the turn; nothing was undone").
      notify(require("cadenza.errors").text(err), vim.log.levels.ERROR)
      return
    end
    accept(result)
  end)
end

local function current_file()
  local name = api.nvim_buf_get_name(0)
  local path = vim.uv.fs_realpath(name) or name
  for _, file in ipairs(state.files) do
    local ok, fname = pcall(vim.uri_to_fname, file.uri)
    if ok and (vim.uv.fs_realpath(fname) or fname) == path then
      return file
    end
  end
end

--- The pending hunk under the cursor (its new lines, or the line its old ones were on).
---@return table? hunk
---@return table? file
function M.hunk_at_cursor()
  local file = current_file()
  if not file then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  for _, hunk in ipairs(pending(file)) do
    local first, last = M.rows(hunk)
    if row >= first and row <= math.max(first, last) then
      return hunk, file
    end
  end
  return nil, file
end

local function on_hunk(action)
  local hunk = M.hunk_at_cursor()
  if not hunk then
    notify("no change to review under the cursor", vim.log.levels.WARN)
    return
  end
  M.act(action, { hunks = { hunk.id } })
end

local function on_file(action)
  local file = current_file()
  if not file or #pending(file) == 0 then
    notify("no change to review in this file", vim.log.levels.WARN)
    return
  end
  M.act(action, { uris = { file.uri } })
end

function M.keep_hunk()
  on_hunk("keep")
end
function M.undo_hunk()
  on_hunk("undo")
end
function M.keep_file()
  on_file("keep")
end
function M.undo_file()
  on_file("undo")
end

local function jump(forward)
  local file = current_file()
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local best
  for _, hunk in ipairs(file and pending(file) or {}) do
    local first = M.rows(hunk)
    if (forward and first > row and (not best or first < best)) or (not forward and first < row and (not best or first > best)) then
      best = first
    end
  end
  if best then
    api.nvim_win_set_cursor(0, { math.min(best + 1, api.nvim_buf_line_count(0)), 0 })
  end
end

function M.next_hunk()
  jump(true)
end
function M.prev_hunk()
  jump(false)
end

return M
