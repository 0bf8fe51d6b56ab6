-- The `cadenza serve` clients: one per workspace root, started with vim.lsp, attached to the
-- root's file buffers (so the agent reads unsaved text), with Cadenza's handlers.
local compat = require("cadenza.compat")
local config = require("cadenza.config")
local log = require("cadenza.log")

local M = {}

local api = vim.api

---@type table<integer, fun(client: table)[]> callbacks waiting for a client's initialization
local pending = {}
---@type table<string, integer> client id by root (vim.lsp.get_clients omits clients that
--- are still initializing)
local by_root = {}
---@type table<string, boolean> roots whose server could not start or exited with an error
--- (cleared when one of their servers initializes)
local failed = {}
local augroup = nil

local function real(path)
  return vim.uv.fs_realpath(path) or vim.fs.normalize(path)
end

--- The workspace root of a buffer: setup's root_dir, else a root marker upwards, else the cwd.
---@param bufnr integer
---@return string
function M.root_for(bufnr)
  bufnr = bufnr == 0 and api.nvim_get_current_buf() or bufnr
  local root_dir = config.options.root_dir
  local root
  if type(root_dir) == "function" then
    root = root_dir(bufnr)
  elseif type(root_dir) == "string" then
    root = vim.fn.expand(root_dir)
  end
  if not root and vim.bo[bufnr].buftype == "" and api.nvim_buf_get_name(bufnr) ~= "" then
    root = vim.fs.root(bufnr, config.options.root_markers)
  end
  return real(root or vim.fn.getcwd())
end

local function under(path, root)
  local prefix = root:sub(-1) == "/" and root or root .. "/"
  return path == root or path:sub(1, #prefix) == prefix
end

--- The running client of `root`, if any.
---@param root string
---@return table? vim.lsp.Client
function M.get(root)
  local client = by_root[root] and vim.lsp.get_client_by_id(by_root[root])
  if client and not compat.is_stopped(client) then
    return client
  end
  by_root[root] = nil
end

--- Every running Cadenza client (initializing ones included).
---@return table[]
function M.all()
  local out = {}
  for root in pairs(by_root) do
    out[#out + 1] = M.get(root)
  end
  return out
end

local function loaded_buf_of(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  fname = real(fname)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(buf)
    if name ~= "" and api.nvim_buf_is_loaded(buf) and real(name) == fname then
      return buf
    end
  end
end

--- Why a WorkspaceEdit must be refused: a versioned edit computed on an older buffer.
--- Neovim's own handler skips such an edit with a message but answers applied = true; the
--- server must hear that nothing changed.
---@param edit table lsp.WorkspaceEdit
---@return string? reason
function M.stale_reason(edit)
  for _, change in ipairs(type(edit) == "table" and edit.documentChanges or {}) do
    local doc = change.textDocument
    if change.kind == nil and type(doc) == "table" and type(doc.version) == "number" then
      local buf = doc.version > 0 and loaded_buf_of(doc.uri)
      -- The version Neovim sent in didOpen/didChange (its changedtick).
      local current = buf and (rawget(vim.lsp.util.buf_versions, buf) or vim.b[buf].changedtick)
      if current and current > doc.version then
        return ("%s changed in the editor since the agent read it (version %d, buffer at %d)"):format(
          vim.uri_to_fname(doc.uri),
          doc.version,
          current
        )
      end
    end
  end
end

--- workspace/applyEdit: refuse stale versions, else Neovim's own handler (undo with `u`).
function M.apply_edit(err, params, ctx)
  local reason = type(params) == "table" and M.stale_reason(params.edit)
  if reason then
    log.add("WARN", "refused an edit: " .. reason)
    return { applied = false, failureReason = reason }
  end
  return vim.lsp.handlers["workspace/applyEdit"](err, params, ctx)
end

local function log_message(err, params, ctx)
  if type(params) == "table" then
    log.add(log.level_of(params.type), tostring(params.message))
  end
  return vim.lsp.handlers["window/logMessage"](err, params, ctx)
end

local function show_message(err, params, ctx)
  if type(params) == "table" then
    log.add(log.level_of(params.type), tostring(params.message))
  end
  return vim.lsp.handlers["window/showMessage"](err, params, ctx)
end

local function handlers()
  local prompts = require("cadenza.prompts")
  local session = require("cadenza.session")
  local own = {
    ["cadenza/sessionUpdate"] = session.on_update,
    ["cadenza/askUser"] = prompts.ask_user,
    ["cadenza/requestPermission"] = prompts.request_permission,
    ["cadenza/waitingHuman"] = prompts.waiting_human,
    ["workspace/applyEdit"] = M.apply_edit,
    ["window/logMessage"] = log_message,
    ["window/showMessage"] = show_message,
  }
  return vim.tbl_extend("error", own, require("cadenza.intel").handlers())
end

--- Cadenza's own client capabilities (`experimental.cadenza`): the server's questions,
--- permission requests and "act in the browser" prompts come as cadenza/askUser,
--- cadenza/requestPermission and cadenza/waitingHuman (prompts.lua) rather than as
--- window/showMessageRequest buttons.
--- codeIntelligence: cadenza/diagnostics, references, definition, rename (intel.lua).
M.CADENZA_CAPABILITIES = {
  askUser = true,
  requestPermission = true,
  waitingHuman = true,
  codeIntelligence = require("cadenza.intel").CAPABILITY,
}

--- Neovim's client capabilities (window.showDocument.support included: the server opens a
--- waiting_human page with window/showDocument first) plus Cadenza's own.
---@return table
function M.capabilities()
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.experimental = vim.tbl_deep_extend(
    "force",
    type(capabilities.experimental) == "table" and capabilities.experimental or {},
    { cadenza = vim.deepcopy(M.CADENZA_CAPABILITIES) }
  )
  return capabilities
end

--- Attach the root's loaded file buffers to the client (each sends didOpen with its text).
---@param client table
---@param root string
function M.attach_buffers(client, root)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(buf)
    if
      api.nvim_buf_is_loaded(buf)
      and vim.bo[buf].buftype == ""
      and name ~= ""
      and under(real(name), root)
      and not vim.lsp.buf_is_attached(buf, client.id)
    then
      vim.lsp.buf_attach_client(buf, client.id)
    end
  end
end

local function watch_buffers()
  if augroup then
    return
  end
  augroup = api.nvim_create_augroup("cadenza.buffers", { clear = true })
  api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
    group = augroup,
    callback = function(ev)
      local name = api.nvim_buf_get_name(ev.buf)
      if name == "" or vim.bo[ev.buf].buftype ~= "" then
        return
      end
      local path = real(name)
      for _, client in ipairs(M.all()) do
        if under(path, client.root_dir) and not vim.lsp.buf_is_attached(ev.buf, client.id) then
          vim.lsp.buf_attach_client(ev.buf, client.id)
        end
      end
    end,
  })
end

local function on_init(client)
  local callbacks = pending[client.id] or {}
  pending[client.id] = nil
  failed[client.root_dir] = nil
  local info = client.server_info or {}
  log.add("INFO", ("server %s %s ready for %s"):format(info.name or "?", info.version or "?", client.root_dir))
  -- Neovim sends didOpen for the attached buffers right after on_init: run the callbacks
  -- (startSession...) after that.
  vim.schedule(function()
    for _, callback in ipairs(callbacks) do
      callback(client)
    end
  end)
end

local function on_exit(code, signal, client_id)
  pending[client_id] = nil
  for root, id in pairs(by_root) do
    if id == client_id then
      by_root[root] = nil
      if code ~= 0 and signal == 0 then
        failed[root] = true
      end
    end
  end
  log.add(code == 0 and "INFO" or "ERROR", ("server exited: code %d, signal %d"):format(code, signal))
  vim.schedule(function()
    require("cadenza.progress").client_exited(client_id)
    require("cadenza.session").client_exited(client_id, code)
    if code ~= 0 and signal == 0 then
      vim.notify(
        ("Cadenza: the server exited with code %d; :CadenzaLog! shows its output, :checkhealth cadenza what is missing"):format(
          code
        ),
        vim.log.levels.ERROR,
        { title = "Cadenza" }
      )
    end
  end)
end

--- Start the client of `root`.
---@param root string
---@return table? client
function M.start(root)
  local cmd, source = config.server_cmd()
  local id = compat.start_client({
    name = config.name,
    cmd = cmd,
    cmd_env = config.cmd_env(),
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fs.basename(root) } },
    init_options = config.init_options(),
    capabilities = M.capabilities(),
    handlers = handlers(),
    flags = { debounce_text_changes = config.options.debounce_text_changes },
    on_init = on_init,
    on_exit = on_exit,
  })
  if not id then
    failed[root] = true
    log.add("ERROR", ("could not start %s (%s)"):format(table.concat(cmd, " "), source))
    vim.notify(
      ("Cadenza: could not start `%s`: install the server from a checkout of the Cadenza repository (python3 -m pip install /path/to/cadenza) or set `cmd` in setup(); :checkhealth cadenza says more"):format(
        table.concat(cmd, " ")
      ),
      vim.log.levels.ERROR,
      { title = "Cadenza" }
    )
    return nil
  end
  by_root[root] = id
  log.add("INFO", ("started `%s` (%s) for %s"):format(table.concat(cmd, " "), source, root))
  require("cadenza.progress").setup()
  watch_buffers()
  return vim.lsp.get_client_by_id(id)
end

---@class cadenza.client.StartOptions
---@field automatic? boolean started for the person without a command (inline completions):
--- never again for a root whose server could not start or exited with an error (its error
--- was shown once); a command starts it again.

--- Call `callback(client, root)` once the client of the buffer's root is initialized,
--- starting the server if needed; the root's file buffers are attached first.
---@param bufnr integer
---@param callback fun(client: table, root: string)
---@param opts? cadenza.client.StartOptions
function M.with_client(bufnr, callback, opts)
  M.with_root(M.root_for(bufnr), callback, opts)
end

--- Call `callback(client, root)` once the client of `root` is initialized, starting the
--- server if needed; the root's file buffers are attached first.
---@param root string
---@param callback fun(client: table, root: string)
---@param opts? cadenza.client.StartOptions
function M.with_root(root, callback, opts)
  local client = M.get(root)
  if not client and opts and opts.automatic and failed[root] then
    return
  end
  client = client or M.start(root)
  if not client then
    return
  end
  M.attach_buffers(client, root)
  if client.initialized then
    callback(client, root)
  else
    pending[client.id] = pending[client.id] or {}
    table.insert(pending[client.id], function(c)
      callback(c, root)
    end)
  end
end

--- workspace/executeCommand with one object argument; `callback(err, result)`.
---@param client table
---@param command string
---@param argument table
---@param callback fun(err: table?, result: any)
function M.execute(client, command, argument, callback)
  local params = { command = command, arguments = { argument } }
  local ok = compat.request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      log.add("WARN", ("%s failed: %s"):format(command, tostring(err.message)))
    end
    callback(err, result)
  end)
  if not ok then
    callback({ code = -32099, message = "the server is not running" }, nil)
  end
end

local METHOD_NOT_FOUND = -32601
local INVALID_PARAMS = -32602

--- Whether `err` says the server lacks `command` (rather than rejecting its arguments):
--- JSON-RPC MethodNotFound, or InvalidParams for a command the server does not advertise
--- (pygls answers an unknown command with -32602 "Command name '...' is not defined").
---@param client table
---@param command string
---@param err table
---@return boolean
function M.is_unsupported(client, command, err)
  if type(err) ~= "table" then
    return false
  end
  if err.code == METHOD_NOT_FOUND then
    return true
  end
  local provider = (client.server_capabilities or {}).executeCommandProvider
  local commands = type(provider) == "table" and provider.commands or {}
  return err.code == INVALID_PARAMS and not vim.tbl_contains(commands, command)
end

return M
