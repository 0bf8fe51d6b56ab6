-- The user commands (:CadenzaRun, :CadenzaCancel, :CadenzaUndo, :CadenzaSessions, :CadenzaLog)
-- and what they do. Modules are required when a command runs, not when it is defined.
local M = {}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

local function short(id)
  return tostring(id):sub(1, 8)
end

local function error_text(err)
  return ("%s (%s)"):format(tostring(err.message), tostring(err.code))
end

--- The message shown when the server lacks a command.
---@param what string e.g. "undo"
---@param command string e.g. "cadenza.undoSession"
---@param err table the JSON-RPC error
---@return string
function M.unsupported_message(what, command, err)
  return ("this server does not support %s yet (%s: it answered %s)"):format(
    what,
    command,
    error_text(err)
  )
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

local function start_session(task, bufnr, range)
  local client_mod = require("cadenza.client")
  local config = require("cadenza.config")
  client_mod.with_client(bufnr, function(client, root)
    if range then
      task = M.task_with_context(task, bufnr, range[1], range[2], root)
    end
    local argument = { task = task, rootUri = vim.uri_from_fname(root) }
    argument.model = config.options.model
    argument.workflow = config.options.workflow
    client_mod.execute(client, "cadenza.startSession", argument, function(err, result)
      if err or type(result) ~= "table" or not result.sessionId then
        notify("could not start the session: " .. (err and error_text(err) or "no sessionId"), vim.log.levels.ERROR)
        return
      end
      local session = require("cadenza.session").add(result.sessionId, {
        client_id = client.id,
        task = task,
        root = root,
        model = config.model(),
      })
      require("cadenza.log").add("INFO", ("session %s started: %s"):format(session.id, task))
      local panel = require("cadenza.panel")
      panel.header(session)
      if config.options.panel.auto_open then
        panel.open(false)
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
    start_session(task, bufnr, range)
    return
  end
  vim.ui.input({ prompt = "Cadenza task: " }, function(input)
    if input and vim.trim(input) ~= "" then
      start_session(input, bufnr, range)
    end
  end)
end

local function session_or_latest(id, running)
  local session_mod = require("cadenza.session")
  if id and id ~= "" then
    for _, session in ipairs(session_mod.list()) do
      if session.id == id or session.id:sub(1, #id) == id then
        return session
      end
    end
    return nil, ("no session %s in this Neovim"):format(id)
  end
  local session = session_mod.latest(running)
  if not session then
    return nil, running and "no running session" or "no session yet (:CadenzaRun starts one)"
  end
  return session
end

local function client_of(session)
  local client = vim.lsp.get_client_by_id(session.client_id)
  if not client or require("cadenza.compat").is_stopped(client) then
    return nil
  end
  return client
end

--- The session `id` (or the newest one; `running`: among running ones) and its live client;
--- nil after telling the person why not.
---@param id string?
---@param running boolean
local function session_with_client(id, running)
  local session, why = session_or_latest(id, running)
  if not session then
    notify(why, vim.log.levels.WARN)
    return nil, nil
  end
  local client = client_of(session)
  if not client then
    notify("the server of session " .. short(session.id) .. " is not running", vim.log.levels.WARN)
    return session, nil
  end
  return session, client
end

--- :CadenzaCancel [id]: cancel a session (default: the newest running one).
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

local function load_session(client, chosen)
  local client_mod = require("cadenza.client")
  local command = "cadenza.loadSession"
  require("cadenza.session").add(chosen.sessionId, {
    client_id = client.id,
    task = chosen.task,
    root = client.root_dir,
  })
  require("cadenza.panel").open(false)
  client_mod.execute(client, command, { sessionId = chosen.sessionId }, function(err)
    if err then
      if client_mod.is_unsupported(client, command, err) then
        notify(M.unsupported_message("loading sessions", command, err), vim.log.levels.WARN)
      else
        notify("loading the session failed: " .. error_text(err), vim.log.levels.ERROR)
      end
    end
  end)
end

--- :CadenzaSessions: the server's sessions (cadenza.listSessions) in vim.ui.select; the chosen
--- one is replayed into the Cadenza buffer (cadenza.loadSession).
function M.sessions()
  local client_mod = require("cadenza.client")
  local command = "cadenza.listSessions"
  client_mod.with_client(vim.api.nvim_get_current_buf(), function(client)
    client_mod.execute(client, command, vim.empty_dict(), function(err, result)
      if err then
        if client_mod.is_unsupported(client, command, err) then
          notify(M.unsupported_message("listing sessions", command, err), vim.log.levels.WARN)
        else
          notify("listing sessions failed: " .. error_text(err), vim.log.levels.ERROR)
        end
        return
      end
      local items = type(result) == "table" and (result.sessions or result) or {}
      if #items == 0 then
        notify("the server has no sessions")
        return
      end
      vim.ui.select(items, {
        prompt = "Cadenza sessions",
        kind = "cadenza.sessions",
        format_item = function(item)
          return ("%s  %-16s %s"):format(short(item.sessionId), tostring(item.state or ""), tostring(item.task or ""))
        end,
      }, function(chosen)
        if chosen then
          load_session(client, chosen)
        end
      end)
    end)
  end)
end

local function complete_sessions(running)
  return function(lead)
    local out = {}
    for _, session in ipairs(require("cadenza.session").list()) do
      if (not running or session.state == "running") and session.id:sub(1, #lead) == lead then
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
  end, { nargs = "?", complete = complete_sessions(true), desc = "Cadenza: cancel a running session" })
  define("CadenzaUndo", function(o)
    M.undo(o.args)
  end, { nargs = "?", complete = complete_sessions(false), desc = "Cadenza: undo a session's changes" })
  define("CadenzaSessions", function()
    M.sessions()
  end, { nargs = 0, desc = "Cadenza: list the server's sessions" })
  define("CadenzaLog", function(o)
    require("cadenza.log").open(o.bang)
  end, { nargs = 0, bang = true, desc = "Cadenza: show the log (! the LSP log with the server's stderr)" })
end

return M
