-- :CadenzaRestore [N]: restore a session to before one of your messages (cadenza.restoreTurn).
-- The server puts back the files that message's turn and the later ones changed (a file you
-- changed since is left alone and named), cuts the conversation before it, and gives the
-- message back: it goes into the chat's prompt, to edit and send again. Without N, the message
-- is the one at or above the cursor in the Cadenza buffer.
local M = {}

local api = vim.api
local pb = require("cadenza.panel_buffer")

---@type {session: string, mark: integer, buf: integer}[] your messages, as written
local marks = {}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

--- Remember that a message of yours in `session_id` starts at `row` (0-based) of the buffer.
---@param session_id string
---@param row integer
function M.remember(session_id, row)
  table.insert(marks, { session = session_id, mark = pb.mark(row), buf = pb.buf() })
end

--- Forget the session's messages (a replay writes them again).
---@param session_id string
function M.forget(session_id)
  marks = vim.tbl_filter(function(m)
    return m.session ~= session_id
  end, marks)
end

--- Whether a message of the session is remembered already.
---@param session_id string
---@return boolean
function M.counted(session_id)
  for _, m in ipairs(marks) do
    if m.session == session_id then
      return true
    end
  end
  return false
end

--- The session's messages in the buffer now, in order: their rows (0-based).
---@param session_id string
---@return integer[]
local function rows_of(session_id)
  local buf = pb.buf()
  local rows = {}
  for _, m in ipairs(marks) do
    local row = m.buf == buf and m.session == session_id and pb.mark_row(m.mark) or nil
    if row then
      rows[#rows + 1] = row
    end
  end
  table.sort(rows)
  return rows
end

--- The session and turn (1-based) of your message at or above `row` of the Cadenza buffer.
---@param row integer 0-based
---@return string? session_id
---@return integer? turn
function M.turn_at(row)
  local buf = pb.buf()
  local best, best_row
  for _, m in ipairs(marks) do
    local at = m.buf == buf and pb.mark_row(m.mark) or nil
    if at and at <= row and (not best_row or at >= best_row) then
      best, best_row = m.session, at
    end
  end
  if not best then
    return nil
  end
  local turn = 0
  for _, at in ipairs(rows_of(best)) do
    if at <= best_row then
      turn = turn + 1
    end
  end
  return best, turn
end

local function drop_from(session_id, turn)
  local keep = {}
  local buf = pb.buf()
  local rows = rows_of(session_id)
  local cut = rows[turn]
  for _, m in ipairs(marks) do
    local at = m.buf == buf and pb.mark_row(m.mark) or nil
    if not (m.session == session_id and at and cut and at >= cut) then
      keep[#keep + 1] = m
    end
  end
  marks = keep
end

local function summary(result)
  local parts = {}
  local files = type(result.files) == "table" and #result.files or 0
  parts[#parts + 1] = ("%d file(s) put back"):format(files)
  if type(result.skipped) == "table" and #result.skipped > 0 then
    local names = {}
    for _, item in ipairs(result.skipped) do
      names[#names + 1] = ("%s (%s)"):format(item.path, item.reason)
    end
    parts[#parts + 1] = "left alone: " .. table.concat(names, ", ")
  end
  return table.concat(parts, "; ")
end

local function restored(session, turn, result)
  drop_from(session.id, turn)
  local chat = require("cadenza.chat")
  chat.use(session.id)
  chat.open()
  chat.set_input(type(result.text) == "string" and result.text or "")
  local detail = summary(result)
  require("cadenza.panel").note(
    session,
    ("↺ restored to before your message %d (%s); it is back in the prompt"):format(turn, detail)
  )
  notify(("restored to before your message %d: %s"):format(turn, detail))
end

--- Restore `session` to before its `turn`.
---@param session cadenza.Session
---@param turn integer
function M.restore(session, turn)
  local client_mod = require("cadenza.client")
  local command = "cadenza.restoreTurn"
  client_mod.with_root(session.root, function(client)
    client_mod.execute(client, command, { sessionId = session.id, turn = turn }, function(err, result)
      if err then
        if client_mod.is_unsupported(client, command, err) then
          notify(require("cadenza.commands").unsupported_message("restoring", command, err), vim.log.levels.WARN)
        else
          notify("restore failed: " .. require("cadenza.errors").text(err), vim.log.levels.ERROR)
        end
        return
      end
      restored(session, turn, type(result) == "table" and result or {})
    end)
  end)
end

--- :CadenzaRestore [N]: the message under the cursor in the Cadenza buffer, or the chat's
--- session's message N.
---@param arg string
function M.run(arg)
  local session_mod = require("cadenza.session")
  local session, turn
  if arg ~= "" then
    turn = tonumber(arg)
    if not turn or turn < 1 or turn % 1 ~= 0 then
      notify("use :CadenzaRestore on one of your messages, or :CadenzaRestore N (N from 1)", vim.log.levels.WARN)
      return
    end
    session = require("cadenza.chat").session() or session_mod.latest()
  else
    if api.nvim_get_current_buf() ~= pb.buf() then
      notify("put the cursor on one of your messages in the Cadenza buffer, or use :CadenzaRestore N", vim.log.levels.WARN)
      return
    end
    local id
    id, turn = M.turn_at(api.nvim_win_get_cursor(0)[1] - 1)
    session = id and session_mod.get(id) or nil
  end
  if not session or not turn then
    notify("no message of yours to restore to", vim.log.levels.WARN)
    return
  end
  M.restore(session, turn)
end

return M
