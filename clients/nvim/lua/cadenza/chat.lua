-- :CadenzaChat: the Cadenza buffer as a conversation, with a prompt window under it. The
-- first message starts a session (cadenza.startSession); each next one is a follow-up in the
-- same conversation (cadenza.promptSession), with the files it @mentions as context. A message
-- sent while a turn runs is queued for its end (cadenza.queue).
local M = {}

local api = vim.api

local state = {
  input = nil, ---@type integer? the prompt buffer
  origin = nil, ---@type integer? the buffer the chat was opened from (@buffer)
  root = nil, ---@type string?
  session_id = nil, ---@type string? the conversation the next message goes on
  commands = {}, ---@type table[] cadenza.listCommands' commands, for "/" completion
  history = {}, ---@type string[] sent messages, oldest first
  history_pos = nil, ---@type integer?
  starting = nil, ---@type boolean? the first message's startSession is under way
  typed = {}, ---@type table<string, {text: string, names: string[]}> follow-ups sent, by session
}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

--- The server's slash commands, as last listed.
---@return table[]
function M.commands()
  return state.commands
end

--- The conversation the next message goes on (nil: it starts a new session).
---@return cadenza.Session?
function M.session()
  return state.session_id and require("cadenza.session").get(state.session_id) or nil
end

--- Make `session_id` the chat's conversation (e.g. after :CadenzaSessions or :CadenzaRun).
---@param session_id string?
function M.use(session_id)
  state.session_id = session_id
end

local function load_commands(client)
  local client_mod = require("cadenza.client")
  local argument = state.root and { rootUri = vim.uri_from_fname(state.root) } or vim.empty_dict()
  client_mod.execute(client, "cadenza.listCommands", argument, function(err, result)
    if not err and type(result) == "table" and type(result.commands) == "table" then
      state.commands = result.commands
    end
  end)
end

local function set_history(step)
  if #state.history == 0 then
    return
  end
  local pos = (state.history_pos or (#state.history + 1)) + step
  pos = math.max(1, math.min(#state.history + 1, pos))
  state.history_pos = pos
  local text = state.history[pos] or ""
  api.nvim_buf_set_lines(state.input, 0, -1, false, vim.split(text, "\n", { plain = true }))
end

local function map_input(buf)
  local function map(mode, lhs, fn, desc)
    vim.keymap.set(mode, lhs, fn, { buffer = buf, desc = "Cadenza: " .. desc })
  end
  map("n", "<CR>", M.send, "send the message")
  map({ "n", "i" }, "<C-s>", function()
    vim.cmd.stopinsert()
    M.send()
  end, "send the message")
  map("n", "<C-p>", function()
    set_history(-1)
  end, "the previous message")
  map("n", "<C-n>", function()
    set_history(1)
  end, "the next message")
  map("n", "q", function()
    M.close()
  end, "close the chat")
end

-- Typing "@" anywhere, or "/" at the start of the prompt, opens the completion menu.
local function autocomplete(buf)
  api.nvim_create_autocmd("TextChangedI", {
    buffer = buf,
    group = api.nvim_create_augroup("cadenza.chat", { clear = true }),
    callback = function()
      local row, col = unpack(api.nvim_win_get_cursor(0))
      local line = api.nvim_get_current_line()
      local typed = line:sub(col, col)
      local trigger = typed == "@" or (typed == "/" and row == 1 and col == 1)
      if trigger and vim.fn.pumvisible() == 0 then
        api.nvim_feedkeys(vim.keycode("<C-x><C-o>"), "n", false)
      end
    end,
  })
end

--- The prompt buffer, created on first use.
---@return integer
function M.input_buf()
  if state.input and api.nvim_buf_is_valid(state.input) then
    return state.input
  end
  local buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, "Cadenza prompt")
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "markdown"
  vim.bo[buf].omnifunc = "v:lua.require'cadenza.mentions'.omnifunc"
  vim.bo[buf].completefunc = "v:lua.require'cadenza.mentions'.omnifunc"
  map_input(buf)
  autocomplete(buf)
  state.input = buf
  return buf
end

--- Open the chat: the Cadenza buffer and the prompt under it, the cursor in the prompt.
---@param opts? {new?: boolean} new: the next message starts a new conversation
function M.open(opts)
  opts = opts or {}
  local current = api.nvim_get_current_buf()
  if current ~= state.input and not vim.b[current].cadenza then
    state.origin = current
  end
  local client_mod = require("cadenza.client")
  state.root = client_mod.root_for(state.origin or current)
  if opts.new then
    state.session_id = nil
  elseif not M.session() then
    local newest = require("cadenza.session").list(function(s)
      return s.root == nil or s.root == state.root
    end)[1]
    state.session_id = newest and newest.id or nil
  end
  local input = M.input_buf()
  vim.b[input].cadenza_chat = { root = state.root, origin = state.origin }
  local panel_win = require("cadenza.panel").open(false)
  local win = vim.fn.bufwinid(input)
  if win == -1 then
    win = api.nvim_open_win(input, true, { split = "below", win = panel_win, height = 4 })
    vim.wo[win].winfixheight = true
    vim.wo[win].wrap = true
    vim.wo[win].number = false
    vim.wo[win].relativenumber = false
    vim.wo[win].signcolumn = "no"
    vim.wo[win].winbar = "Cadenza: <CR> sends · @ mentions a file · / a command · q closes"
  end
  api.nvim_set_current_win(win)
  client_mod.with_root(state.root, load_commands)
end

--- Close the prompt window (the Cadenza buffer stays).
function M.close()
  local win = state.input and vim.fn.bufwinid(state.input) or -1
  if win ~= -1 and #api.nvim_list_wins() > 1 then
    api.nvim_win_close(win, false)
  end
end

local function first_turn(text, uris)
  -- The mentioned files go as context (the server reads them), as in a follow-up.
  local context = #uris > 0 and { files = uris } or nil
  local origin = state.origin and api.nvim_buf_is_valid(state.origin) and state.origin or api.nvim_get_current_buf()
  state.starting = true
  require("cadenza.commands").start(text, origin, nil, function(session)
    state.starting = nil
    state.session_id = session and session.id or nil
    if session then
      -- The whole message, as a replay shows it (the header has its first line only).
      require("cadenza.panel").user_text(session, text, true)
    end
  end, context)
  -- A failed start leaves no session: after a bounded wait the next message may start one.
  vim.defer_fn(function()
    state.starting = nil
  end, 30000)
end

--- The message the person typed for `session_id`'s next turn, once (the server's
--- session_resume carries the text the model got: the command expanded, the context added).
---@param session_id string
---@return {text: string, names: string[]}?
function M.take_typed(session_id)
  local typed = state.typed[session_id]
  state.typed[session_id] = nil
  return typed
end

local function follow_up(session, text, uris, names)
  local client_mod = require("cadenza.client")
  local argument = { sessionId = session.id, text = text }
  if #uris > 0 then
    argument.context = { files = uris }
  end
  client_mod.with_root(session.root or state.root, function(client)
    session.client_id = client.id
    state.typed[session.id] = { text = text, names = names }
    client_mod.execute(client, "cadenza.promptSession", argument, function(err)
      if err then
        state.typed[session.id] = nil
        notify("the message was not sent: " .. require("cadenza.errors").text(err), vim.log.levels.ERROR)
      end
    end)
  end)
end

--- Send `text` as `session`'s next turn now, with the files it @mentions as context.
---@param session cadenza.Session
---@param text string
function M.follow_up_now(session, text)
  local uris, names = require("cadenza.mentions").resolve(text, session.root or state.root, state.origin)
  follow_up(session, text, uris, names)
end

--- Put `text` in the prompt (a message given back by :CadenzaRestore, to edit and send again).
---@param text string
function M.set_input(text)
  api.nvim_buf_set_lines(M.input_buf(), 0, -1, false, vim.split(text, "\n", { plain = true }))
  state.history_pos = nil
end

--- Send `text` (nil: the prompt buffer's text, which is then cleared) in the chat's
--- conversation. Returns false when nothing was sent.
---@param text? string
---@return boolean
function M.send(text)
  local from_buffer = text == nil
  if from_buffer then
    text = table.concat(api.nvim_buf_get_lines(M.input_buf(), 0, -1, false), "\n")
  end
  if vim.trim(text) == "" then
    return false
  end
  local session = M.session()
  if state.starting then
    notify("the agent is still starting on your last message: wait for it, or :CadenzaCancel stops it", vim.log.levels.WARN)
    return false
  end
  state.root = state.root or require("cadenza.client").root_for(api.nvim_get_current_buf())
  if session and session.state == "running" then
    require("cadenza.queue").add(session, text) -- sent when the turn ends
  elseif session then
    M.follow_up_now(session, text)
  else
    local uris = require("cadenza.mentions").resolve(text, state.root, state.origin)
    first_turn(text, uris)
  end
  table.insert(state.history, text)
  state.history_pos = nil
  if from_buffer then
    api.nvim_buf_set_lines(M.input_buf(), 0, -1, false, {})
  end
  return true
end

return M
