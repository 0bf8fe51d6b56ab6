-- The user commands (:CadenzaRun, :CadenzaCancel, :CadenzaUndo and the definitions of all the
-- others: :CadenzaChat, :CadenzaModel, :CadenzaReview, :CadenzaReply, :CadenzaSessions,
-- :CadenzaLog). Modules are required when a command runs, not when it is defined.
local M = {}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

local function short(id)
  return tostring(id):sub(1, 8)
end

-- The server's reason in plain words (no protocol prefix, no error code).
local function error_text(err)
  return require("cadenza.errors").text(err)
end

--- The message shown when the server lacks a command.
---@param what string e.g. "undo"
---@param command string e.g. "cadenza.undoSession"
---@param err table the JSON-RPC error
---@return string
function M.unsupported_message(what, command, err)
  require("cadenza.log").add("WARN", ("%s: %s (%s)"):format(command, tostring(err.message), tostring(err.code)))
  return ("this Cadenza server is too old for %s: update it (git pull in your Cadenza checkout, then install it again)"):format(what)
end

--- The task with the selected lines as context: the file (relative to the root) and the
--- line numbers, then the lines in a fenced block.
---@param task string
---@param bufnr integer
---@param line1 integer
---@param line2 integer
---@param root string
---@return string
function M.task_with_context(task, bufnr, line1, line2, root)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local path = name ~= "" and name or "[No Name]"
  local real = vim.uv.fs_realpath(path) or path
  if real:sub(1, #root + 1) == root .. "/" then
    path = real:sub(#root + 2)
  end
  local parts = {
    task,
    "",
    ("Selected lines %d-%d of %s:"):format(line1, line2, path),
    "```" .. (vim.bo[bufnr].filetype or ""),
  }
  for _, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, line1 - 1, line2, false)) do
    parts[#parts + 1] = line
  end
  parts[#parts + 1] = "```"
  return table.concat(parts, "\n")
end

--- Start a session on the buffer's root; `on_started(session, client)` once the server
--- answered (`session` nil: it refused, and the person was told why).
---@param task string
---@param bufnr integer
---@param range? integer[] {line1, line2}: the selected lines go into the task
---@param on_started? fun(session: cadenza.Session?, client: table)
---@param context? table cadenza.startSession's `context` ({files = {uri...}}: the chat's @mentions)
function M.start(task, bufnr, range, on_started, context)
  local client_mod = require("cadenza.client")
  local config = require("cadenza.config")
  client_mod.with_client(bufnr, function(client, root)
    if range then
      task = M.task_with_context(task, bufnr, range[1], range[2], root)
    end
    local argument = { task = task, rootUri = vim.uri_from_fname(root) }
    -- The focused file: the local model's loop primes it into the first message.
    if vim.api.nvim_buf_get_name(bufnr) ~= "" and vim.bo[bufnr].buftype == "" then
      argument.textDocument = { uri = vim.uri_from_bufnr(bufnr) }
    end
    argument.model = config.options.model
    argument.workflow = config.options.workflow
    argument.context = context
    client_mod.execute(client, "cadenza.startSession", argument, function(err, result)
      if err or type(result) ~= "table" or not result.sessionId then
        notify("could not start the session: " .. (err and error_text(err) or "the server gave no session"), vim.log.levels.ERROR)
        if on_started then
          on_started(nil, client)
        end
        return
      end
      local session = require("cadenza.session").add(result.sessionId, {
        client_id = client.id,
        task = task,
        root = root,
        model = config.model(),
      })
      require("cadenza.log").add("INFO", ("session %s started: %s"):format(session.id, task))
      if package.loaded["cadenza.chat"] then
        require("cadenza.chat").use(session.id) -- the chat goes on in the newest session
      end
      local panel = require("cadenza.panel")
      local header = panel.header(session)
      if header then -- the task is the session's first message (:CadenzaRestore counts it)
        require("cadenza.restore").remember(session.id, header)
      end
      if config.options.panel.auto_open then
        panel.open(false)
      end
      if on_started then
        on_started(session, client)
      end
    end)
  end)
end

--- :CadenzaRun {task}: start a session on the current buffer's root. With a range, the
--- selected lines go into the task as context. Without a task, vim.ui.input asks for one.
---@param task string?
---@param opts? {range?: integer, line1?: integer, line2?: integer, bufnr?: integer}
function M.run(task, opts)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  local range = (opts.range or 0) > 0 and { opts.line1, opts.line2 } or nil
  if task and vim.trim(task) ~= "" then
    M.start(task, bufnr, range)
    return
  end
  vim.ui.input({ prompt = "Cadenza task: " }, function(input)
    if input and vim.trim(input) ~= "" then
      M.start(input, bufnr, range)
    end
  end)
end

local ACTIVE = { running = true, waiting = true }

--- The session of this Neovim whose id is `id` or starts with it.
---@param id string
---@return cadenza.Session?
function M.find_session(id)
  for _, session in ipairs(require("cadenza.session").list()) do
    if session.id == id or session.id:sub(1, #id) == id then
      return session
    end
  end
end

--- The session `id` (a prefix will do), else the newest one (`active`: running or waiting).
local function session_or_latest(id, active)
  if id and id ~= "" then
    local session = M.find_session(id)
    if session then
      return session
    end
    return nil, ("no session %s in this Neovim"):format(id)
  end
  local session = require("cadenza.session").latest(active and ACTIVE or nil)
  if not session then
    return nil, active and "no running or waiting session" or "no session yet (:CadenzaRun starts one)"
  end
  return session
end

--- The session's client while its server runs.
---@param session cadenza.Session
---@return table?
function M.client_of(session)
  local client = vim.lsp.get_client_by_id(session.client_id)
  if not client or require("cadenza.compat").is_stopped(client) then
    return nil
  end
  return client
end

--- The session `id` (or the newest one; `active`: among running and waiting ones) and its live
--- client; nil after telling the person why not.
---@param id string?
---@param active boolean
local function session_with_client(id, active)
  local session, why = session_or_latest(id, active)
  if not session then
    notify(why, vim.log.levels.WARN)
    return nil, nil
  end
  local client = M.client_of(session)
  if not client then
    notify("the server of session " .. short(session.id) .. " is not running", vim.log.levels.WARN)
    return session, nil
  end
  return session, client
end

--- :CadenzaCancel [id]: cancel a session (default: the newest running or waiting one).
---@param id string?
function M.cancel(id)
  local session, client = session_with_client(id, true)
  if not client then
    return
  end
  require("cadenza.client").execute(client, "cadenza.cancelSession", { sessionId = session.id }, function(err, result)
    if err then
      notify("cancel failed: " .. error_text(err), vim.log.levels.ERROR)
    elseif type(result) == "table" and result.cancelled then
      notify(("cancelling session %s"):format(short(session.id)))
    else
      notify(("session %s was not running"):format(short(session.id)), vim.log.levels.WARN)
    end
  end)
end

--- :CadenzaUndo [id]: undo a session's changes on the server's side (cadenza.undoSession;
--- default: the newest session). Neovim's own `u` undoes an edit in its buffer.
---@param id string?
function M.undo(id)
  local session, client = session_with_client(id, false)
  if not client then
    return
  end
  local client_mod = require("cadenza.client")
  local command = "cadenza.undoSession"
  client_mod.execute(client, command, { sessionId = session.id }, function(err, result)
    if err then
      if client_mod.is_unsupported(client, command, err) then
        notify(M.unsupported_message("undo", command, err), vim.log.levels.WARN)
      else
        notify("undo failed: " .. error_text(err), vim.log.levels.ERROR)
      end
      return
    end
    local detail = ""
    if type(result) == "table" and type(result.files) == "table" then
      detail = (": %d file(s)"):format(#result.files)
    end
    notify(("undid session %s%s"):format(short(session.id), detail))
  end)
end

--- :CadenzaSessions (see cadenza.history).
function M.sessions()
  require("cadenza.history").sessions()
end

--- :CadenzaReply [text] (see cadenza.history).
---@param text string?
---@param session_id string?
function M.reply(text, session_id)
  require("cadenza.history").reply(text, session_id)
end

local function complete_sessions(states)
  return function(lead)
    local out = {}
    for _, session in ipairs(require("cadenza.session").list()) do
      if (not states or states[session.state]) and session.id:sub(1, #lead) == lead then
        out[#out + 1] = session.id
      end
    end
    return out
  end
end

local created = false

--- Define the user commands (idempotent; also called by setup()).
function M.create()
  if created then
    return
  end
  created = true
  local define = vim.api.nvim_create_user_command
  define("CadenzaRun", function(o)
    M.run(o.args, { range = o.range, line1 = o.line1, line2 = o.line2 })
  end, { nargs = "*", range = true, desc = "Cadenza: run an agent task (a range adds the lines as context)" })
  define("CadenzaCancel", function(o)
    M.cancel(o.args)
  end, { nargs = "?", complete = complete_sessions(ACTIVE), desc = "Cadenza: cancel a running or waiting session" })
  define("CadenzaReply", function(o)
    M.reply(o.args)
  end, { nargs = "*", desc = "Cadenza: answer a session that waits for you (cadenza.replySession)" })
  define("CadenzaSteer", function(o)
    local session = require("cadenza.chat").session() or require("cadenza.session").latest({ running = true })
    require("cadenza.queue").steer(session, o.args)
  end, { nargs = "*", desc = "Cadenza: send a message into the running turn (none: the oldest queued one)" })
  define("CadenzaUnqueue", function(o)
    local session = require("cadenza.chat").session()
    require("cadenza.queue").remove(session, tonumber(o.args))
  end, { nargs = "?", desc = "Cadenza: drop a queued message (default: the last one queued)" })
  define("CadenzaUndo", function(o)
    M.undo(o.args)
  end, { nargs = "?", complete = complete_sessions(nil), desc = "Cadenza: undo a session's changes" })
  define("CadenzaRestore", function(o)
    require("cadenza.restore").run(o.args)
  end, { nargs = "?", desc = "Cadenza: restore to before your message under the cursor (or message N)" })
  define("CadenzaSessions", function()
    M.sessions()
  end, { nargs = 0, desc = "Cadenza: list the server's sessions" })
  define("CadenzaChat", function(o)
    require("cadenza.chat").open({ new = o.bang })
    if o.args ~= "" then
      require("cadenza.chat").send(o.args)
    end
  end, { nargs = "*", bang = true, desc = "Cadenza: chat with the agent (! starts a new conversation)" })
  define("CadenzaModel", function(o)
    require("cadenza.models").run(o.args)
  end, { nargs = "?", desc = "Cadenza: choose the model of the next turn and of new sessions" })
  define("CadenzaWorkflow", function(o)
    require("cadenza.models").run(o.args, "workflow")
  end, { nargs = "?", desc = "Cadenza: choose the workflow of the next turn and of new sessions" })
  define("CadenzaReview", function(o)
    local review = require("cadenza.review")
    if o.args == "keep" or o.args == "undo" then
      review.act(o.args, {})
    elseif o.args == "" then
      local session = require("cadenza.chat").session() or require("cadenza.session").latest()
      if session then
        review.show(session)
      end
    else
      notify("use :CadenzaReview, :CadenzaReview keep or :CadenzaReview undo", vim.log.levels.WARN)
    end
  end, {
    nargs = "?",
    complete = function()
      return { "keep", "undo" }
    end,
    desc = "Cadenza: show the last turn's changes, or keep or undo all of them",
  })
  define("CadenzaPermissions", function()
    require("cadenza.permissions").run()
  end, { nargs = 0, desc = "Cadenza: list the rules that answer permission prompts; revoke one" })
  define("CadenzaLog", function(o)
    require("cadenza.log").open(o.bang)
  end, { nargs = 0, bang = true, desc = "Cadenza: show the log (! the LSP log with the server's stderr)" })
end

return M
