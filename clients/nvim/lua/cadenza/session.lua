-- Sessions this Neovim started or heard of, and the cadenza/sessionUpdate handler.
--
-- A session runs, then ends with a session_end. After `needs_user_input` or `waiting_human`
-- that end is not final: the session waits for the person (the server prompts with
-- cadenza/askUser or cadenza/waitingHuman; :CadenzaReply answers later), and a
-- session_resume makes it run again, until another session_end. Every other stop reason is
-- final.
local log = require("cadenza.log")
local panel = require("cadenza.panel")
local usage = require("cadenza.usage")

local M = {}

--- Stop reasons after which a session waits for the person rather than ending.
M.WAITING = { needs_user_input = true, waiting_human = true }

---@class cadenza.Session
---@field id string
---@field client_id integer
---@field task string?
---@field root string?
---@field model string?
---@field state "running"|"waiting"|"ended"
---@field stop_reason string?
---@field message string?
---@field steps integer?
---@field question string? while waiting: the missing information, or what to do in the browser
---@field why_no_default string? while waiting for needs_user_input
---@field url string? while waiting for waiting_human: the page
---@field replaying boolean? cadenza.loadSession is replaying its history (no notifications)
---@field edited table<string, boolean> absolute paths the session changed
---@field usage table? token usage of the current (or last) turn (cadenza.usage)
---@field usage_text string? the last ended turn's usage in words
---@field after_resume boolean? the last update was a session_resume

---@type table<string, cadenza.Session>
local sessions = {}
---@type string[] ids, oldest first
local order = {}
---@type table<string, fun()[]> callbacks run once when a session stops waiting
local on_leave = {}

--- Record a session (or add fields to a known one).
---@param id string
---@param fields table
---@return cadenza.Session
function M.add(id, fields)
  local session = sessions[id]
  if not session then
    session = { id = id, state = "running", edited = {} }
    sessions[id] = session
    order[#order + 1] = id
  end
  for key, value in pairs(fields or {}) do
    session[key] = value
  end
  return session
end

---@param id string
---@return cadenza.Session?
function M.get(id)
  return sessions[id]
end

--- Sessions, newest first (optionally only those matching `pred`).
---@param pred? fun(s: cadenza.Session): boolean
---@return cadenza.Session[]
function M.list(pred)
  local out = {}
  for i = #order, 1, -1 do
    local session = sessions[order[i]]
    if not pred or pred(session) then
      out[#out + 1] = session
    end
  end
  return out
end

--- The newest session, or the newest one in one of `states` (e.g. { running = true }).
---@param states? table<string, boolean>
---@return cadenza.Session?
function M.latest(states)
  return M.list(function(s)
    return not states or states[s.state] == true
  end)[1]
end

--- Run `callback` once when the session stops waiting (resumed, ended, or its server exited);
--- at once when it is known and not waiting.
---@param id string
---@param callback fun()
function M.when_not_waiting(id, callback)
  local session = sessions[id]
  if session and session.state ~= "waiting" then
    callback()
    return
  end
  on_leave[id] = on_leave[id] or {}
  table.insert(on_leave[id], callback)
end

local function left_waiting(id)
  local callbacks = on_leave[id] or {}
  on_leave[id] = nil
  for _, callback in ipairs(callbacks) do
    pcall(callback)
  end
end

local function real(path)
  return vim.uv.fs_realpath(path) or vim.fs.normalize(path)
end

local function unsaved_edits(session)
  local modified = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if name ~= "" and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      modified[real(name)] = true
    end
  end
  local out = {}
  for path in pairs(session.edited) do
    if modified[real(path)] then
      out[#out + 1] = path
    end
  end
  table.sort(out)
  return out
end

local function event(pattern, data)
  vim.api.nvim_exec_autocmds("User", { pattern = pattern, modeline = false, data = data })
end

local function text_or_nil(value)
  return type(value) == "string" and value ~= "" and value or nil
end

--- session_end: the run stopped; the session waits (needs_user_input, waiting_human) or is over.
local function run_ended(session, update)
  local waiting = M.WAITING[update.stopReason] == true
  session.usage_text = usage.format(session.usage)
  session.state = waiting and "waiting" or "ended"
  session.stop_reason = update.stopReason
  session.message = update.message
  session.steps = update.steps
  if waiting then
    session.question = text_or_nil(update.missingInfo) or text_or_nil(update.message)
    session.why_no_default = text_or_nil(update.whyNoDefault)
    session.url = text_or_nil(update.url)
  else
    session.question, session.why_no_default, session.url = nil, nil, nil
  end
  panel.session_end(session, update, unsaved_edits(session))
  if session.replaying then
    return
  end
  local data = { session_id = session.id, stop_reason = update.stopReason, message = update.message }
  if waiting then
    -- The server prompts now (prompts.lua); :CadenzaReply answers later.
    log.add("INFO", ("session %s waits: %s"):format(session.id, tostring(update.stopReason)))
    data.question = session.question
    event("CadenzaSessionWaiting", data)
  else
    left_waiting(session.id)
    log.add("INFO", ("session %s ended: %s"):format(session.id, tostring(update.stopReason)))
    if type(update.fix) == "table" then
      require("cadenza.models").offer_fix(session, update.fix, update.message)
    end
    -- The review lists the agent's edits and what its commands changed (shown as the calls'
    -- diffs); what the server could not list, it says in listChanges' `unlisted`.
    if next(session.edited) and require("cadenza.config").options.review.auto then
      require("cadenza.review_notes").turn_ended(session)
    elseif (session.turn_commands or 0) > 0 and not session.replaying then
      require("cadenza.review_notes").commands_ended(session)
    end
    event("CadenzaSessionEnd", data)
    if package.loaded["cadenza.queue"] then
      require("cadenza.queue").turn_ended(session)
    end
  end
end

--- session_resume: a waiting session runs again.
local function resumed(session, update)
  session.state = "running"
  session.usage = nil -- a new turn
  local answered = update.after == "needs_user_input" or update.after == "waiting_human"
  if (update.kind or (answered and "answer" or "prompt")) == "prompt" then
    session.turn_commands = nil -- a follow-up starts a new turn (an answer goes on in it)
  end
  session.stop_reason, session.message = nil, nil
  session.question, session.why_no_default, session.url = nil, nil, nil
  local typed = package.loaded["cadenza.chat"] and require("cadenza.chat").take_typed(session.id)
  if typed then
    -- Show the message as the person typed it, not as the model got it.
    panel.resume(session, vim.tbl_extend("force", update, { reply = typed.text }))
    if #typed.names > 0 then
      panel.note(session, "with " .. table.concat(typed.names, ", "))
    end
  else
    panel.resume(session, update)
  end
  if package.loaded["cadenza.review"] and not session.replaying then
    require("cadenza.review").turn_started(session)
  end
  left_waiting(session.id)
  if not session.replaying then
    log.add("INFO", ("session %s resumed after %s"):format(session.id, tostring(update.after)))
  end
end

local function remember_diffs(session, update)
  for _, item in ipairs(update.content or {}) do
    if item.type == "diff" and type(item.path) == "string" then
      session.edited[item.path] = true
    end
  end
end

local function text_of(update)
  local content = update.content or {}
  if content.type == "text" and type(content.text) == "string" then
    return content.text
  end
end

--- A `candidates` update in words: the replies tried against the tests, the one kept and why;
--- a reply not judged says why when the server said (`why`).
---@param update {tried: integer?, kept: integer?, passed: table?, of: integer?, why: table?}
---@return string
local function candidates_line(update)
  local tried, kept = tonumber(update.tried) or 0, tonumber(update.kept) or 0
  local why = type(update.why) == "table" and update.why or {}
  local function not_judged(i)
    local reason = why[i]
    return (type(reason) == "string" and reason ~= "") and ("not judged: " .. reason) or "not judged"
  end
  local each = {}
  for i, n in ipairs(type(update.passed) == "table" and update.passed or {}) do
    each[i] = type(n) == "number" and tostring(n) or not_judged(i)
  end
  local best = type(update.passed) == "table" and update.passed[kept] or nil
  if type(best) ~= "number" then
    local reasons, seen = {}, {}
    for _, reason in ipairs(why) do
      if type(reason) == "string" and reason ~= "" and not seen[reason] then
        seen[reason] = true
        reasons[#reasons + 1] = reason
      end
    end
    local because = #reasons > 0 and (" (" .. table.concat(reasons, "; ") .. ")") or ""
    return ("Tried %d replies against the tests; none could be judged%s, kept reply %d."):format(tried, because, kept)
  end
  local of = type(update.of) == "number" and (" of " .. update.of) or ""
  -- A reason holds commas of its own: then the replies are parted by semicolons.
  local sep = ", "
  for _, e in ipairs(each) do
    if e:find(":", 1, true) then
      sep = "; "
    end
  end
  return ("Tried %d replies against the tests on copies of the workspace; kept reply %d: %d%s tests pass with it (each reply: %s)."):format(
    tried,
    kept,
    best,
    of,
    table.concat(each, sep)
  )
end

local RENDER = {
  agent_message_chunk = function(session, update)
    local text = text_of(update)
    if text then
      panel.text(session, text)
    end
  end,
  user_message_chunk = function(session, update)
    local text = text_of(update)
    if text then
      -- A replay's first one is the task; later ones were steered into a running turn.
      panel.user_text(session, text, require("cadenza.restore").counted(session.id))
    end
  end,
  tool_call = function(session, update)
    if update.kind == "execute" then -- run_command
      session.turn_commands = (session.turn_commands or 0) + 1
    end
    panel.tool_call(session, update)
  end,
  tool_call_update = function(session, update)
    remember_diffs(session, update)
    panel.tool_update(session, update)
  end,
  movement = panel.movement,
  compaction = panel.compaction,
  candidates = function(session, update)
    panel.note(session, candidates_line(update))
  end,
  plan = panel.plan,
  session_resume = resumed,
  session_end = run_ended,
  model_reply = function(session, update)
    session.usage = session.usage or usage.new()
    usage.add_reply(session.usage, update)
    pcall(vim.cmd.redrawstatus)
  end,
  usage_update = function(session, update)
    session.usage = session.usage or usage.new()
    usage.add_update(session.usage, update)
    pcall(vim.cmd.redrawstatus)
  end,
}

--- Handler of the cadenza/sessionUpdate notification (lsp-handler signature).
---@param params {sessionId: string, update: table}
---@param ctx {client_id: integer}
function M.on_update(_, params, ctx)
  if type(params) ~= "table" or type(params.update) ~= "table" then
    return
  end
  local session = sessions[params.sessionId]
  if not session then
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    session = M.add(params.sessionId, {
      client_id = ctx.client_id,
      root = client and client.root_dir or nil,
    })
  end
  local kind = params.update.sessionUpdate
  -- A replay carries the person's answer twice: the session_resume with the reply as they
  -- wrote it, then the user message the model got (the server's wording around the reply,
  -- "The person answered your question (…): …"). The resume line shows the reply.
  local after_resume = session.after_resume
  session.after_resume = kind == "session_resume" or nil
  if kind == "user_message_chunk" and after_resume then
    return
  end
  local render = RENDER[kind]
  if render then -- other kinds (repair, ...) are not shown
    render(session, params.update)
  end
end

--- After cadenza.loadSession: the state the server reports (`running`; a waiting stop reason:
--- the server revived the session and prompts again; or a final one such as `interrupted`).
---@param session cadenza.Session
---@param info table the result's `session` ({state, question?, ...})
function M.settle(session, info)
  local state = type(info) == "table" and info.state
  if type(state) ~= "string" or state == "" then
    return
  end
  if state == "running" then
    session.state = "running"
  elseif M.WAITING[state] then
    session.state = "waiting"
    session.stop_reason = state
    session.question = text_or_nil(info.question) or session.question
  else
    session.state = "ended"
    session.stop_reason = state
  end
end

--- The server of `client_id` exited: its running sessions are over; its waiting ones still
--- wait (a reply to a new server revives them from their transcript).
---@param client_id integer
---@param code integer
function M.client_exited(client_id, code)
  for _, session in ipairs(M.list()) do
    if session.client_id == client_id and session.state == "running" then
      session.state = "ended"
      session.stop_reason = "server_exit"
      panel.note(session, ("the server exited (code %d) before the session ended"):format(code))
    elseif session.client_id == client_id and session.state == "waiting" then
      panel.note(session, "the server exited; the session still waits: :CadenzaReply continues it")
      left_waiting(session.id)
    end
  end
end

return M
