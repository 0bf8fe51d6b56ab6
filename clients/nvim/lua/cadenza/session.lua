-- Sessions this Neovim started or heard of, and the cadenza/sessionUpdate handler.
local log = require("cadenza.log")
local panel = require("cadenza.panel")

local M = {}

---@class cadenza.Session
---@field id string
---@field client_id integer
---@field task string?
---@field root string?
---@field model string?
---@field state "running"|"ended"
---@field stop_reason string?
---@field message string?
---@field steps integer?
---@field edited table<string, boolean> absolute paths the session changed

---@type table<string, cadenza.Session>
local sessions = {}
---@type string[] ids, oldest first
local order = {}

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

--- The newest session, or the newest running one.
---@param running? boolean
---@return cadenza.Session?
function M.latest(running)
  return M.list(function(s)
    return not running or s.state == "running"
  end)[1]
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

local function finish(session, update)
  session.state = "ended"
  session.stop_reason = update.stopReason
  session.message = update.message
  session.steps = update.steps
  panel.session_end(session, update, unsaved_edits(session))
  log.add("INFO", ("session %s ended: %s"):format(session.id, tostring(update.stopReason)))
  if update.stopReason == "needs_user_input" then
    vim.notify(
      ("Cadenza needs your input: %s"):format(update.missingInfo or update.message or ""),
      vim.log.levels.WARN,
      { title = "Cadenza" }
    )
  end
  vim.api.nvim_exec_autocmds("User", {
    pattern = "CadenzaSessionEnd",
    modeline = false,
    data = { session_id = session.id, stop_reason = update.stopReason, message = update.message },
  })
end

local function remember_diffs(session, update)
  for _, item in ipairs(update.content or {}) do
    if item.type == "diff" and type(item.path) == "string" then
      session.edited[item.path] = true
    end
  end
end

local RENDER = {
  agent_message_chunk = function(session, update)
    local content = update.content or {}
    if content.type == "text" and type(content.text) == "string" then
      panel.text(session, content.text)
    end
  end,
  tool_call = panel.tool_call,
  tool_call_update = function(session, update)
    remember_diffs(session, update)
    panel.tool_update(session, update)
  end,
  movement = panel.movement,
  compaction = panel.compaction,
  plan = panel.plan,
  session_end = finish,
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
  local render = RENDER[params.update.sessionUpdate]
  if render then -- other kinds (usage_update, ...) are not shown
    render(session, params.update)
  end
end

--- The server of `client_id` exited: its running sessions are over.
---@param client_id integer
---@param code integer
function M.client_exited(client_id, code)
  for _, session in ipairs(M.list()) do
    if session.client_id == client_id and session.state == "running" then
      session.state = "ended"
      session.stop_reason = "server_exit"
      panel.note(session, ("the server exited (code %d) before the session ended"):format(code))
    end
  end
end

return M
