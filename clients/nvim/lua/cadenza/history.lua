-- The server's sessions: :CadenzaSessions lists them (cadenza.listSessions) and replays one
-- into the Cadenza buffer (cadenza.loadSession); :CadenzaReply answers one that waits for the
-- person (cadenza.replySession), also one of an earlier server run.
local commands = require("cadenza.commands")

local M = {}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

local function short(id)
  return tostring(id):sub(1, 8)
end

local function error_text(err)
  return require("cadenza.errors").text(err)
end

local function describe_info(item)
  local text = ("%s  %-16s %s"):format(short(item.sessionId), tostring(item.state or ""), (tostring(item.task or ""):gsub("\n.*", " …")))
  if type(item.question) == "string" and item.question ~= "" then
    text = text .. " — " .. item.question
  end
  return text
end

--- Record a session the server listed (cadenza.listSessions' shape) with its client.
local function remember(client, item)
  local session_mod = require("cadenza.session")
  local fields = {
    client_id = client.id,
    task = item.task,
    root = type(item.root) == "string" and item.root ~= "" and item.root or client.root_dir,
    model = item.model,
  }
  if not session_mod.get(item.sessionId) and session_mod.WAITING[item.state] then
    fields.state = "waiting"
    fields.stop_reason = item.state
    fields.question = item.question
  end
  return session_mod.add(item.sessionId, fields)
end

local function load_session(client, chosen)
  local client_mod = require("cadenza.client")
  local session_mod = require("cadenza.session")
  local panel = require("cadenza.panel")
  local command = "cadenza.loadSession"
  local session = remember(client, chosen)
  session.replaying = true
  if package.loaded["cadenza.chat"] then
    require("cadenza.chat").use(session.id) -- the chat goes on in the replayed session
  end
  session.usage = nil -- the replay counts its turns again
  panel.header(session, true)
  panel.open(false)
  client_mod.execute(client, command, { sessionId = chosen.sessionId }, function(err, result)
    session.replaying = nil
    if err then
      if client_mod.is_unsupported(client, command, err) then
        notify(commands.unsupported_message("loading sessions", command, err), vim.log.levels.WARN)
      else
        notify("loading the session failed: " .. error_text(err), vim.log.levels.ERROR)
      end
      return
    end
    local info = type(result) == "table" and result.session or chosen
    session_mod.settle(session, info)
    local count = type(result) == "table" and tonumber(result.updates) or nil
    local line = ("loaded %s update(s); %s"):format(count and tostring(count) or "?", tostring(info.state or session.state))
    if session.state == "waiting" then
      line = line .. (session.stop_reason == "waiting_human" and ": :CadenzaReply when done in the browser"
        or ": :CadenzaReply {answer} answers")
    end
    panel.note(session, line)
  end)
end

--- :CadenzaSessions: the server's sessions (cadenza.listSessions → {sessions: [{sessionId,
--- task, state, started, workflow, model, root, question?}]}) in vim.ui.select; the chosen
--- one is replayed into the Cadenza buffer (cadenza.loadSession); a waiting one asks again.
function M.sessions()
  local client_mod = require("cadenza.client")
  local command = "cadenza.listSessions"
  client_mod.with_client(vim.api.nvim_get_current_buf(), function(client)
    client_mod.execute(client, command, vim.empty_dict(), function(err, result)
      if err then
        if client_mod.is_unsupported(client, command, err) then
          notify(commands.unsupported_message("listing sessions", command, err), vim.log.levels.WARN)
        else
          notify("listing sessions failed: " .. error_text(err), vim.log.levels.ERROR)
        end
        return
      end
      local items = type(result) == "table" and type(result.sessions) == "table" and result.sessions or {}
      if #items == 0 then
        notify("the server has no sessions")
        return
      end
      vim.ui.select(items, {
        prompt = "Cadenza sessions",
        kind = "cadenza.sessions",
        format_item = describe_info,
      }, function(chosen)
        if chosen then
          load_session(client, chosen)
        end
      end)
    end)
  end)
end

--- Call `callback(session, client)` with the waiting session to reply to: `id` (a prefix will
--- do), else the newest waiting session of this Neovim (vim.ui.select when several wait), else
--- one the server lists as waiting (e.g. from before a restart).
local function with_waiting_session(id, callback)
  local client_mod = require("cadenza.client")
  local session_mod = require("cadenza.session")
  local function go(session)
    local client = commands.client_of(session)
    if client then
      callback(session, client)
      return
    end
    -- Its server is gone: a new one revives the session from its transcript.
    client_mod.with_root(session.root or client_mod.root_for(0), function(new_client)
      session.client_id = new_client.id
      callback(session, new_client)
    end)
  end
  if id and id ~= "" then
    local session = commands.find_session(id)
    if session then
      go(session)
      return
    end
  end
  local waiting = session_mod.list(function(s)
    return s.state == "waiting"
  end)
  if #waiting == 1 then
    go(waiting[1])
    return
  elseif #waiting > 1 then
    vim.ui.select(waiting, {
      prompt = "Reply to which session?",
      kind = "cadenza.reply",
      format_item = function(s)
        return describe_info({ sessionId = s.id, state = s.stop_reason, task = s.task, question = s.question })
      end,
    }, function(chosen)
      if chosen then
        go(chosen)
      end
    end)
    return
  end
  local command = "cadenza.listSessions"
  client_mod.with_client(vim.api.nvim_get_current_buf(), function(client)
    client_mod.execute(client, command, vim.empty_dict(), function(err, result)
      if err then
        notify("listing sessions failed: " .. error_text(err), vim.log.levels.ERROR)
        return
      end
      local listed = {}
      for _, item in ipairs(type(result) == "table" and type(result.sessions) == "table" and result.sessions or {}) do
        if session_mod.WAITING[item.state] and (not id or id == "" or item.sessionId:sub(1, #id) == id) then
          listed[#listed + 1] = item
        end
      end
      if #listed == 0 then
        notify(id and id ~= "" and ("no session %s waits for a reply"):format(id) or "no session waits for a reply", vim.log.levels.WARN)
        return
      end
      local function chosen(item)
        callback(remember(client, item), client)
      end
      if #listed == 1 then
        chosen(listed[1])
        return
      end
      vim.ui.select(listed, { prompt = "Reply to which session?", kind = "cadenza.reply", format_item = describe_info }, function(item)
        if item then
          chosen(item)
        end
      end)
    end)
  end)
end

--- The reply text: `text` when given, else vim.ui.input with the session's question.
local function with_reply_text(session, text, callback)
  if text and vim.trim(text) ~= "" then
    callback(text)
    return
  end
  local browser = session.stop_reason == "waiting_human"
  local prompt
  if browser then
    prompt = "Done in the browser? What you did (empty: just done): "
  else
    prompt = session.question or "Your answer"
    if session.why_no_default then
      prompt = ("%s (%s)"):format(prompt, session.why_no_default)
    end
    prompt = prompt .. ": "
  end
  vim.ui.input({ prompt = prompt }, function(input)
    if input == nil or (not browser and vim.trim(input) == "") then
      return
    end
    callback(input)
  end)
end

--- :CadenzaReply [text]: answer a session that waits for the person (cadenza.replySession):
--- after needs_user_input the answer, after waiting_human what you did in the browser (may be
--- empty). Without [text], vim.ui.input asks (with the session's question).
---@param text string?
---@param session_id string? default: the newest waiting session (vim.ui.select when several)
function M.reply(text, session_id)
  with_waiting_session(session_id, function(session, client)
    with_reply_text(session, text, function(reply)
      local client_mod = require("cadenza.client")
      local command = "cadenza.replySession"
      client_mod.execute(client, command, { sessionId = session.id, text = reply }, function(err, result)
        if err then
          if client_mod.is_unsupported(client, command, err) then
            notify(commands.unsupported_message("replies", command, err), vim.log.levels.WARN)
          else
            notify("reply failed: " .. error_text(err), vim.log.levels.ERROR)
          end
          return
        end
        if type(result) == "table" and result.resumed then
          notify(("session %s resumed"):format(short(session.id)))
        else
          notify(("session %s did not resume"):format(short(session.id)), vim.log.levels.WARN)
        end
      end)
    end)
  end)
end

return M
