-- Code intelligence for the agent, from the language servers Neovim already runs.
--
-- client.lua declares experimental.cadenza.codeIntelligence, so the server asks
-- cadenza/diagnostics, cadenza/references, cadenza/definition and cadenza/rename
-- (docs/protocol.md). They are answered from vim.diagnostic.get and from the buffer's *other*
-- LSP clients (textDocument/references, definition, rename), the buffer being loaded first
-- when needed. Nothing is applied here: a rename's WorkspaceEdit goes back to the server,
-- which applies it through its own edit path (versions, review, undo).
--
-- A file no other client serves (no language server attached to its buffer, or none that
-- offers the method) is answered "not available": the error M.NOT_AVAILABLE, and for
-- cadenza/diagnostics the URI in the result's `unavailable`. The server then asks a language
-- server it starts itself (docs/protocol.md).
--
-- Positions: the server speaks the Cadenza client's offset_encoding; every other client
-- speaks its own. Columns are converted through the line's text (byte index in between).
-- Each request to another client waits at most `timeout_ms`; handlers run in a coroutine
-- (as prompts.lua explains), so the editor stays responsive while waiting.
local compat = require("cadenza.compat")
local config = require("cadenza.config")

local M = {}

local api = vim.api

M.CAPABILITY = { diagnostics = true, references = true, definition = true, rename = true }

--- Longest wait for another language server's answer (ms); below the server's own bound so
--- the server hears a clear error rather than a timeout.
M.timeout_ms = 15000

--- The error code of "no language server in Neovim serves this file" (docs/protocol.md):
--- MethodNotFound, "the method is not available".
M.NOT_AVAILABLE = vim.lsp.protocol.ErrorCodes.MethodNotFound

--- An error answer: `err` is a message, or { code, message } (the code kept).
local function fail(err)
  if type(err) == "table" then
    return nil, vim.lsp.rpc_response_error(err.code, err.message)
  end
  return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.RequestFailed, err)
end

--- Yield until `start(done)` calls done(...) or `ms` pass: done's values, or nil, "timeout".
local function await(start, ms)
  local co, is_main = coroutine.running()
  assert(co and not is_main, "cadenza.intel: handlers run in a coroutine")
  local finished = false
  local timer = assert(vim.uv.new_timer())
  local function finish(...)
    if finished then
      return
    end
    finished = true
    timer:stop()
    timer:close()
    local values = vim.F.pack_len(...)
    vim.schedule(function()
      coroutine.resume(co, vim.F.unpack_len(values))
    end)
  end
  timer:start(ms, 0, function()
    finish(nil, "timeout")
  end)
  start(finish)
  return coroutine.yield()
end

--- The loaded buffer of `uri`, loading it (and detecting its filetype, which starts the
--- language servers configured for it) when needed; true as second value when just loaded.
local function buffer_of(uri)
  local bufnr = vim.uri_to_bufnr(uri)
  local fresh = not api.nvim_buf_is_loaded(bufnr)
  if fresh then
    vim.fn.bufload(bufnr)
    vim.bo[bufnr].buflisted = true
    if vim.bo[bufnr].filetype == "" then
      api.nvim_buf_call(bufnr, function()
        vim.cmd("filetype detect")
      end)
    end
  end
  return bufnr, fresh
end

--- How long a buffer just loaded may take to get a language client attached (ms): a file type
--- without a configured server must not stall the agent's edits.
M.attach_ms = 2000

--- Yield for `ms`.
local function sleep(ms)
  await(function(done)
    vim.defer_fn(done, ms)
  end, ms + 1000)
end

--- Language clients of `bufnr` other than Cadenza's that support `method` (nil: any). For a
--- buffer just loaded (`fresh`), wait (bounded by `attach_ms`) for one to attach, then (by
--- `timeout_ms`) for it to finish initializing.
local function others(bufnr, method, fresh)
  local function find(wanted)
    local out = {}
    for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr, method = wanted })) do
      if client.name ~= config.name then
        out[#out + 1] = client
      end
    end
    return out
  end
  if not fresh then
    return find(method)
  end
  local waited = 0
  while #find(nil) == 0 and waited < M.attach_ms do
    sleep(100)
    waited = waited + 100
  end
  local function ready(clients)
    for _, client in ipairs(clients) do
      if not client.initialized then
        return false
      end
    end
    return true
  end
  waited = 0
  local found = find(method)
  while (#found == 0 or not ready(found)) and #find(nil) > 0 and waited < M.timeout_ms do
    sleep(100)
    waited = waited + 100
    found = find(method)
  end
  return found
end

--- A line's text: the loaded buffer's, else the file's (read once per answer).
local function line_reader()
  local files = {}
  return function(uri, lnum)
    local bufnr = vim.uri_to_bufnr(uri)
    if api.nvim_buf_is_loaded(bufnr) then
      return api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1] or ""
    end
    if files[uri] == nil then
      local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(uri))
      files[uri] = ok and lines or {}
    end
    return (files[uri][lnum + 1] or ""):gsub("\r$", "")
  end
end

--- `position` (in `from` units) converted to `to` units on `line`.
local function convert(line, position, from, to)
  if from == to or type(position) ~= "table" then
    return position
  end
  local byte = vim.str_byteindex(line, from, position.character, false)
  return { line = position.line, character = vim.str_utfindex(line, to, byte, false) }
end

local function convert_range(read, uri, range, from, to)
  if from == to or type(range) ~= "table" then
    return range
  end
  return {
    start = convert(read(uri, range.start.line), range.start, from, to),
    ["end"] = convert(read(uri, range["end"].line), range["end"], from, to),
  }
end

--- The Cadenza client that sent the request (its encoding is the server's).
local function cadenza_of(ctx)
  return vim.lsp.get_client_by_id(ctx.client_id)
end

--- Ask the first other client of the document that answers `method`.
--- None does: the error is { code = M.NOT_AVAILABLE, message }.
---@return any result, (string|table)? error
local function ask(ctx, method, params, extra)
  local ours = cadenza_of(ctx)
  local uri = params.textDocument.uri
  local bufnr, fresh = buffer_of(uri)
  local clients = others(bufnr, method, fresh)
  if #clients == 0 then
    local message = ("no language server in Neovim offers %s for %s"):format(method, uri)
    return nil, { code = M.NOT_AVAILABLE, message = message }
  end
  local read = line_reader()
  local client = clients[1]
  local line = read(uri, params.position.line)
  local position = convert(line, params.position, ours.offset_encoding, client.offset_encoding)
  local request =
    vim.tbl_extend("force", { textDocument = { uri = uri }, position = position }, extra or {})
  local err, result = await(function(done)
    local ok = compat.request(client, method, request, function(e, r)
      done(e, r)
    end, bufnr)
    if not ok then
      done({ message = client.name .. " is not running" })
    end
  end, M.timeout_ms)
  if err == "timeout" then
    return nil, ("%s did not answer %s within %d ms"):format(client.name, method, M.timeout_ms)
  elseif err then
    return nil, ("%s failed: %s"):format(client.name, err.message or vim.inspect(err))
  end
  return result, nil, client, read
end

--- Locations (or LocationLinks) of another client, in the Cadenza client's encoding.
local function locations(result, read, from, to)
  if result == nil or result == vim.NIL then
    return {}
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  local out = {}
  for _, item in ipairs(result) do
    local uri = item.uri or item.targetUri
    local range = item.range or item.targetSelectionRange or item.targetRange
    out[#out + 1] = { uri = uri, range = convert_range(read, uri, range, from, to) }
  end
  return out
end

local function locations_handler(method, include_declaration)
  return function(_, params, ctx)
    local extra = include_declaration and { context = { includeDeclaration = true } } or nil
    local result, err, client, read = ask(ctx, method, params, extra)
    if err then
      return fail(err)
    end
    return locations(result, read, client.offset_encoding, cadenza_of(ctx).offset_encoding)
  end
end

M.references = locations_handler("textDocument/references", true)
M.definition = locations_handler("textDocument/definition", false)

--- A WorkspaceEdit's text ranges converted from `from` to `to` units.
local function convert_edit(edit, read, from, to)
  local function edits(uri, list)
    for _, text_edit in ipairs(list or {}) do
      text_edit.range = convert_range(read, uri, text_edit.range, from, to)
    end
  end
  for uri, list in pairs(edit.changes or {}) do
    edits(uri, list)
  end
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument then
      edits(change.textDocument.uri, change.edits)
    end
  end
  return edit
end

--- cadenza/rename {textDocument, position, newName} → WorkspaceEdit | null (not applied here).
function M.rename(_, params, ctx)
  local extra = { newName = params.newName }
  local result, err, client, read = ask(ctx, "textDocument/rename", params, extra)
  if err then
    return fail(err)
  end
  if result == nil or result == vim.NIL then
    return vim.NIL
  end
  return convert_edit(result, read, client.offset_encoding, cadenza_of(ctx).offset_encoding)
end

--- One buffer's diagnostics (other than Cadenza's own) as LSP Diagnostics in `encoding`.
local function diagnostics_of(bufnr, encoding)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lines = api.nvim_buf_get_lines(bufnr, d.lnum, (d.end_lnum or d.lnum) + 1, false)
    local first, last = lines[1] or "", lines[#lines] or ""
    local code = d.code
    out[#out + 1] = {
      range = {
        start = { line = d.lnum, character = vim.str_utfindex(first, encoding, d.col, false) },
        ["end"] = {
          line = d.end_lnum or d.lnum,
          character = vim.str_utfindex(last, encoding, d.end_col or d.col, false),
        },
      },
      severity = d.severity,
      message = d.message,
      source = d.source,
      code = (type(code) == "string" or type(code) == "number") and code or nil,
    }
  end
  return out
end

--- Ask the buffer's pull-diagnostics servers (textDocument/diagnostic) for fresh diagnostics;
--- Neovim's own handler stores the answer in vim.diagnostic. True when one answered.
local function pull(bufnr, uri)
  local pulled = false
  for _, client in ipairs(others(bufnr, "textDocument/diagnostic", false)) do
    await(function(done)
      local params = { textDocument = { uri = uri } }
      local function on_answer(err, result, ctx)
        pcall(vim.lsp.handlers["textDocument/diagnostic"], err, result, ctx)
        pulled = pulled or err == nil
        done()
      end
      local ok = compat.request(client, "textDocument/diagnostic", params, on_answer, bufnr)
      if not ok then
        done()
      end
    end, M.timeout_ms)
  end
  return pulled
end

--- Wait (bounded) for a push server to publish diagnostics of a buffer just loaded.
local function published(bufnr)
  await(function(done)
    api.nvim_create_autocmd("DiagnosticChanged", {
      buffer = bufnr,
      once = true,
      callback = function()
        done()
      end,
    })
  end, M.timeout_ms)
end

--- cadenza/diagnostics {uris?} → {items: [{uri, diagnostics}], unavailable}. A requested file is
--- loaded when needed; servers that offer pull diagnostics are asked, others get a bounded
--- moment to push. A file with no other client attached and no diagnostics from any source
--- (a linter's count too) is `unavailable`.
function M.diagnostics(_, params, ctx)
  local encoding = cadenza_of(ctx).offset_encoding
  local items = {}
  local uris = type(params) == "table" and params.uris
  if type(uris) ~= "table" then
    local seen = {}
    for _, d in ipairs(vim.diagnostic.get(nil)) do
      if not seen[d.bufnr] and api.nvim_buf_is_loaded(d.bufnr) then
        seen[d.bufnr] = true
        local name = api.nvim_buf_get_name(d.bufnr)
        items[#items + 1] =
          { uri = vim.uri_from_fname(name), diagnostics = diagnostics_of(d.bufnr, encoding) }
      end
    end
    return { items = items }
  end
  local unavailable = {}
  for _, uri in ipairs(uris) do
    local bufnr, fresh = buffer_of(uri)
    local attached = #others(bufnr, nil, fresh) > 0
    if attached and not pull(bufnr, uri) and fresh then
      published(bufnr)
    end
    local found = diagnostics_of(bufnr, encoding)
    if attached or #found > 0 then
      items[#items + 1] = { uri = uri, diagnostics = found }
    else
      unavailable[#unavailable + 1] = uri
    end
  end
  return { items = items, unavailable = unavailable }
end

--- The handlers client.lua registers.
function M.handlers()
  return {
    ["cadenza/diagnostics"] = M.diagnostics,
    ["cadenza/references"] = M.references,
    ["cadenza/definition"] = M.definition,
    ["cadenza/rename"] = M.rename,
  }
end

return M
