-- Messages sent in the chat while a turn runs: queued (shown in the Cadenza buffer), sent as the
-- next turn when the running one ends (one per turn, oldest first), dropped with
-- :CadenzaUnqueue, or steered into the running turn with :CadenzaSteer (cadenza.steerSession:
-- the agent reads it at its next step). A steer the server refuses (no turn runs any more)
-- stays queued.
local M = {}

---@type table<string, string[]> queued messages by session id, oldest first
local queued = {}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

local function first_line(text)
  local line = text:gsub("\n.*", " …")
  return line
end

--- The messages queued for `session_id`, oldest first.
---@param session_id string
---@return string[]
function M.list(session_id)
  return queued[session_id] or {}
end

--- Queue `text` for `session`'s next turn.
---@param session cadenza.Session
---@param text string
function M.add(session, text)
  queued[session.id] = queued[session.id] or {}
  table.insert(queued[session.id], text)
  local n = #queued[session.id]
  require("cadenza.panel").note(
    session,
    ("⏳ queued #%d: %s  (:CadenzaSteer sends it now, :CadenzaUnqueue drops it)"):format(n, first_line(text))
  )
end

--- Drop queued message `index` of `session` (default: the last one queued).
---@param session cadenza.Session?
---@param index? integer
---@return string? text the message dropped
function M.remove(session, index)
  local list = session and queued[session.id] or {}
  index = index or #list
  local text = list[index]
  if not session or not text then
    notify("no queued message" .. (index and index > 0 and (" #" .. index) or ""), vim.log.levels.WARN)
    return nil
  end
  table.remove(list, index)
  require("cadenza.panel").note(session, ("✗ unqueued #%d: %s"):format(index, first_line(text)))
  return text
end

--- Send `text` into `session`'s running turn; `done(ok)` after the server answered.
---@param session cadenza.Session
---@param text string
---@param done? fun(ok: boolean)
local function send_steer(session, text, done)
  local client_mod = require("cadenza.client")
  client_mod.with_root(session.root, function(client)
    client_mod.execute(client, "cadenza.steerSession", { sessionId = session.id, text = text }, function(err)
      if err then
        notify("the message could not steer the turn: " .. require("cadenza.errors").text(err), vim.log.levels.WARN)
      else
        require("cadenza.panel").user_text(session, text, true) -- part of the running turn
        require("cadenza.panel").note(session, "(sent while it worked)")
      end
      if done then
        done(err == nil)
      end
    end)
  end)
end

--- :CadenzaSteer: `text` (or, without one, the oldest queued message) into the running turn.
---@param session cadenza.Session?
---@param text? string
function M.steer(session, text)
  if not session or session.state ~= "running" then
    notify("no turn is running: send the message in the chat instead", vim.log.levels.WARN)
    return
  end
  if text and vim.trim(text) ~= "" then
    send_steer(session, text)
    return
  end
  local list = queued[session.id] or {}
  local first = list[1]
  if not first then
    notify("no queued message to steer with: :CadenzaSteer {text}", vim.log.levels.WARN)
    return
  end
  table.remove(list, 1)
  send_steer(session, first, function(ok)
    if not ok then -- refused: it stays first in the queue, sent when the turn ends
      table.insert(list, 1, first)
    end
  end)
end

--- A turn of `session` ended (not waiting): its oldest queued message goes as the next turn.
---@param session cadenza.Session
function M.turn_ended(session)
  local list = queued[session.id]
  local text = list and table.remove(list, 1)
  if text then
    vim.schedule(function()
      require("cadenza.chat").follow_up_now(session, text)
    end)
  end
end

return M
