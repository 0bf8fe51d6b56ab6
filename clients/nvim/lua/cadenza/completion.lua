-- Inline completions (ghost text) from the server's textDocument/inlineCompletion, on unless
-- setup({ completion = { enabled = false } }). Neovim 0.12+ shows them with its own
-- vim.lsp.inline_completion; older versions with an extmark drawn here: one request per pause
-- in typing (the previous one cancelled), the text shown inline at the cursor, cleared when
-- the cursor moves or insert mode ends. A server that does not offer them is not asked; one
-- whose model cannot fill in the middle answers nothing (its log says why, once); a server
-- that could not start is not started again by typing (its error was shown once).
local compat = require("cadenza.compat")
local config = require("cadenza.config")
local log = require("cadenza.log")

local M = {}

local api = vim.api
local METHOD = "textDocument/inlineCompletion"
--- Milliseconds of quiet typing before a request (the server waits a little more itself).
M.DEBOUNCE_MS = 100
local AUTOMATIC = 2 -- lsp.InlineCompletionTriggerKind.Automatic
local REQUEST_CANCELLED = -32800
local METHOD_NOT_FOUND = -32601
--- Started for the person, not by a command (see client.with_root).
local AUTOMATIC_START = { automatic = true }

M.namespace = api.nvim_create_namespace("cadenza.completion")
local augroup = nil

--- Whether Neovim has its own inline completion (0.12+), used instead of the extmark here.
---@return boolean
function M.native()
  return vim.lsp.inline_completion ~= nil and vim.lsp.inline_completion.enable ~= nil
end

---@class cadenza.completion.Ghost
---@field row integer 0-based
---@field col integer byte column of the cursor
---@field text string what accepting inserts
---@field extmark integer

---@class cadenza.completion.State
---@field timer? uv.uv_timer_t
---@field client? table the client of the request in flight
---@field request_id? integer
---@field ghost? cadenza.completion.Ghost
---@field mapped? boolean
---@field native? boolean Neovim's own inline completion is enabled for the buffer

---@type table<integer, cadenza.completion.State>
local states = {}
---@type table<integer, boolean> clients that answered the method is unknown (not asked again)
local refused = {}

--- Whether `client` answers inline completions: it says so in its capabilities and has not
--- answered that it does not know the method.
---@param client table
---@return boolean
function M.offered_by(client)
  local capabilities = client.server_capabilities or {}
  return capabilities.inlineCompletionProvider ~= nil
    and capabilities.inlineCompletionProvider ~= false
    and not refused[client.id]
end

local function state_of(buf)
  states[buf] = states[buf] or {}
  return states[buf]
end

local function file_buffer(buf)
  return api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == "" and api.nvim_buf_get_name(buf) ~= ""
end

--- The ghost text shown in `buf`, if any (for tests and statuslines).
---@param buf? integer
---@return string?
function M.ghost_text(buf)
  local state = states[buf or api.nvim_get_current_buf()]
  return state and state.ghost and state.ghost.text or nil
end

--- Whether a request of `buf` waits for the server's answer.
---@param buf? integer
---@return boolean
function M.in_flight(buf)
  local state = states[buf or api.nvim_get_current_buf()]
  return state ~= nil and state.request_id ~= nil
end

--- Remove the ghost text of `buf`.
---@param buf integer
function M.clear(buf)
  local state = states[buf]
  if state and state.ghost then
    pcall(api.nvim_buf_del_extmark, buf, M.namespace, state.ghost.extmark)
    state.ghost = nil
  end
end

local function stop_timer(state)
  if state.timer then
    state.timer:stop()
    state.timer:close()
    state.timer = nil
  end
end

--- Cancel the request in flight for `buf` ($/cancelRequest) and the pending one.
---@param buf integer
function M.cancel(buf)
  local state = states[buf]
  if not state then
    return
  end
  stop_timer(state)
  if state.request_id and state.client then
    compat.cancel_request(state.client, state.request_id)
  end
  state.request_id, state.client = nil, nil
end

--- The text of an item to show at the cursor (row, col), or nil when the item starts
--- elsewhere or repeats nothing of what is typed before the cursor.
---@param item table lsp.InlineCompletionItem
---@param buf integer
---@param row integer 0-based
---@param col integer byte column
---@param encoding string the client's offset encoding
---@return string?
function M.item_text(item, buf, row, col, encoding)
  local text = item.insertText
  if type(text) == "table" then
    text = text.value -- a snippet: shown and inserted as its text
  end
  if type(text) ~= "string" or text == "" then
    return nil
  end
  local range = item.range
  if range == nil then
    return text
  end
  if range.start.line ~= row or range["end"].line ~= row then
    return nil
  end
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local start = compat.byteindex(line, encoding, range.start.character)
  local stop = compat.byteindex(line, encoding, range["end"].character)
  if stop ~= col or start > col then
    return nil
  end
  -- The range may begin before the cursor: what is typed there must start the text.
  local typed = line:sub(start + 1, col)
  if text:sub(1, #typed) ~= typed then
    return nil
  end
  return text:sub(#typed + 1)
end

--- Draw `text` at (row, col) of `buf`: the first line inline at the cursor, the rest as
--- virtual lines under it.
---@return integer extmark
local function draw(buf, row, col, text)
  local lines = vim.split(text, "\n", { plain = true })
  local virt_lines = {}
  for i = 2, #lines do
    virt_lines[#virt_lines + 1] = { { lines[i], "CadenzaGhostText" } }
  end
  return api.nvim_buf_set_extmark(buf, M.namespace, row, col, {
    virt_text = { { lines[1], "CadenzaGhostText" } },
    virt_text_pos = "inline",
    virt_lines = #virt_lines > 0 and virt_lines or nil,
    hl_mode = "combine",
  })
end

local function in_insert_mode()
  return api.nvim_get_mode().mode:sub(1, 1) == "i"
end

--- The cursor of the current window when it shows `buf`: 0-based row, byte column.
local function cursor_of(buf)
  local win = api.nvim_get_current_win()
  if api.nvim_win_get_buf(win) ~= buf then
    return nil
  end
  local pos = api.nvim_win_get_cursor(win)
  return pos[1] - 1, pos[2]
end

--- Whether nothing moved since a request was decided: same text, same cursor, insert mode.
local function unchanged(buf, tick, row, col)
  if not api.nvim_buf_is_valid(buf) or api.nvim_buf_get_changedtick(buf) ~= tick or not in_insert_mode() then
    return false
  end
  local r, c = cursor_of(buf)
  return r == row and c == col
end

local function show(buf, tick, row, col, client, result)
  if not unchanged(buf, tick, row, col) then
    return
  end
  local items = type(result) == "table" and (result.items or result) or {}
  local item = items[1]
  local text = item and M.item_text(item, buf, row, col, client.offset_encoding or "utf-16")
  if not text or text == "" then
    return
  end
  M.clear(buf)
  state_of(buf).ghost = { row = row, col = col, text = text, extmark = draw(buf, row, col, text) }
end

--- Ask the buffer's Cadenza client for a completion at the cursor now.
---@param buf integer
function M.request(buf)
  if not file_buffer(buf) or not in_insert_mode() then
    return
  end
  local row, col = cursor_of(buf)
  if not row then
    return
  end
  local tick = api.nvim_buf_get_changedtick(buf)
  require("cadenza.client").with_client(buf, function(client)
    local state = state_of(buf)
    M.cancel(buf)
    if not unchanged(buf, tick, row, col) or not M.offered_by(client) then
      return -- typed or moved while the server started (a new change asks anew), or not offered
    end
    local params = vim.lsp.util.make_position_params(0, client.offset_encoding or "utf-16")
    params.context = { triggerKind = AUTOMATIC }
    local ok, id
    ok, id = compat.request(client, METHOD, params, function(err, result)
      if state.request_id == id then
        state.request_id, state.client = nil, nil
      end
      if err then
        if err.code == METHOD_NOT_FOUND then
          refused[client.id] = true
          log.add("WARN", "the server does not answer inline completions: not asked again")
        elseif err.code ~= REQUEST_CANCELLED then -- a cancelled request is normal while typing
          log.add("WARN", ("inline completion failed: %s"):format(tostring(err.message)))
        end
        return
      end
      show(buf, tick, row, col, client, result)
    end, buf)
    if ok then
      state.request_id, state.client = id, client
    end
  end, AUTOMATIC_START)
end

--- A keystroke changed `buf`: drop the ghost text and the request in flight, ask again after
--- a pause.
---@param buf integer
function M.typed(buf)
  M.clear(buf)
  M.cancel(buf)
  local state = state_of(buf)
  state.timer = vim.uv.new_timer()
  state.timer:start(
    M.DEBOUNCE_MS,
    0,
    vim.schedule_wrap(function()
      stop_timer(state)
      M.request(buf)
    end)
  )
end

--- Insert the ghost text of `buf` at its place and move the cursor after it.
---@param buf integer
---@return boolean accepted
function M.accept(buf)
  local state = states[buf]
  local ghost = state and state.ghost
  if not ghost then
    return false
  end
  M.clear(buf)
  M.cancel(buf)
  local lines = vim.split(ghost.text, "\n", { plain = true })
  api.nvim_buf_set_text(buf, ghost.row, ghost.col, ghost.row, ghost.col, lines)
  local last_col = (#lines == 1 and ghost.col or 0) + #lines[#lines]
  api.nvim_win_set_cursor(0, { ghost.row + #lines, last_col })
  return true
end

--- Dismiss the ghost text of `buf` (and the request in flight).
---@param buf integer
---@return boolean dismissed whether there was ghost text
function M.dismiss(buf)
  local had = M.ghost_text(buf) ~= nil
  M.clear(buf)
  M.cancel(buf)
  return had
end

--- Keep what `key` did in insert mode in `buf` before the plugin maps it (a buffer-local or
--- global mapping: a completion plugin's <Tab>), as the buffer-local `<Plug>(cadenza-NAME)`.
---@return string? plug the key to fall back to; nil when `key` was not mapped
local function keep_previous(buf, key, name)
  return api.nvim_buf_call(buf, function()
    local previous = vim.fn.maparg(key, "i", false, true)
    if vim.tbl_isempty(previous) then
      return nil
    end
    local plug = ("<Plug>(cadenza-%s)"):format(name)
    previous.lhs, previous.lhsraw, previous.lhsrawalt = plug, vim.keycode(plug), nil
    previous.buffer = 1
    -- A mapping mapset() cannot copy: the key falls back to itself, as a plain key would.
    return pcall(vim.fn.mapset, "i", false, previous) and plug or nil
  end)
end

--- Map `key` in `buf` to `act()` (true: it acted); otherwise the key does what it did before.
-- Expression mappings run under textlock: the buffer changes after the mapping returns.
local function map_key(buf, key, name, act, desc)
  local fallback = keep_previous(buf, key, name)
  vim.keymap.set("i", key, function()
    if act() then
      return ""
    end
    return fallback or key
  end, { buffer = buf, expr = true, replace_keycodes = true, remap = fallback ~= nil, desc = desc })
end

local function map_keys(buf)
  local state = state_of(buf)
  if state.mapped then
    return
  end
  state.mapped = true
  local keys = config.options.completion.keys
  local native = M.native()
  if keys.accept then
    map_key(buf, keys.accept, "accept", function()
      if native then
        return vim.lsp.inline_completion.get() and true or false
      end
      if not M.ghost_text(buf) then
        return false
      end
      vim.schedule(function()
        M.accept(buf)
      end)
      return true
    end, "Cadenza: accept the inline completion")
  end
  if keys.dismiss and not native then
    map_key(buf, keys.dismiss, "dismiss", function()
      return M.dismiss(buf)
    end, "Cadenza: dismiss the inline completion")
  end
end

--- Entering insert mode in a file buffer: its Cadenza client is started (and attached), so
--- the first keystroke can be answered; with Neovim's own inline completion, it is enabled
--- for the buffer.
local function entered(buf)
  if not file_buffer(buf) then
    return
  end
  map_keys(buf)
  require("cadenza.client").with_client(buf, function()
    local state = state_of(buf)
    if M.native() and not state.native and config.options.completion.enabled then
      vim.lsp.inline_completion.enable(true, { bufnr = buf })
      state.native = true
    end
  end, AUTOMATIC_START)
end

--- Set inline completions up the first time insert mode starts when setup() was not called
--- (they are on by default); nothing when setup() turned them off or already set them up.
---@param buf integer the buffer where insert mode started
function M.start_by_default(buf)
  if not config.options.completion.enabled or augroup then
    return
  end
  M.setup()
  entered(buf)
end

--- Turn inline completions on or off as the options say (called by setup()).
function M.setup()
  api.nvim_set_hl(0, "CadenzaGhostText", { link = "Comment", default = true })
  augroup = api.nvim_create_augroup("cadenza.completion", { clear = true })
  if not config.options.completion.enabled then
    for buf, state in pairs(states) do
      M.dismiss(buf)
      if state.native and api.nvim_buf_is_valid(buf) then
        vim.lsp.inline_completion.enable(false, { bufnr = buf })
        state.native = nil
      end
    end
    return
  end
  api.nvim_create_autocmd("InsertEnter", {
    group = augroup,
    callback = function(ev)
      entered(ev.buf)
    end,
  })
  if M.native() then
    return
  end
  api.nvim_create_autocmd("TextChangedI", {
    group = augroup,
    callback = function(ev)
      if file_buffer(ev.buf) then
        M.typed(ev.buf)
      end
    end,
  })
  api.nvim_create_autocmd("CursorMovedI", {
    group = augroup,
    callback = function(ev)
      local ghost = states[ev.buf] and states[ev.buf].ghost
      if ghost then
        local row, col = cursor_of(ev.buf)
        if row ~= ghost.row or col ~= ghost.col then
          M.clear(ev.buf)
        end
      end
    end,
  })
  api.nvim_create_autocmd({ "InsertLeave", "BufLeave" }, {
    group = augroup,
    callback = function(ev)
      M.dismiss(ev.buf)
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = augroup,
    callback = function(ev)
      M.cancel(ev.buf)
      states[ev.buf] = nil
    end,
  })
end

return M
