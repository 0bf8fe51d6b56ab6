-- Helpers for the headless scenarios: configuration from the environment pytest sets, waits
-- with reasons, vim.ui / vim.notify stubs, and the end of the run (qall! or cquit 1).
local T = {}

T.notes = {} ---@type {msg: string, level: integer?}[]

--- Write a line to stdout (pytest shows it when the scenario fails).
function T.say(fmt, ...)
  io.stdout:write(string.format(fmt, ...) .. "\n")
  io.stdout:flush()
end

--- An environment variable pytest must have set.
---@param name string
---@return string
function T.env(name)
  local value = vim.env[name]
  if value == nil or value == "" then
    error("missing environment variable " .. name, 0)
  end
  return value
end

T.workspace = vim.env.CADENZA_TEST_WORKSPACE

--- The plugin, configured to start the real server of the test's venv.
---@param extra? table more setup() options
function T.setup(extra)
  local opts = {
    cmd = vim.json.decode(T.env("CADENZA_TEST_SERVER_CMD")),
    model = vim.env.CADENZA_TEST_MODEL,
  }
  require("cadenza").setup(vim.tbl_deep_extend("force", opts, extra or {}))
end

--- Record vim.notify messages instead of showing them.
function T.capture_notify()
  vim.notify = function(msg, level)
    T.notes[#T.notes + 1] = { msg = tostring(msg), level = level }
    T.say("notify[%s]: %s", tostring(level), tostring(msg))
  end
end

--- The first captured notification containing `needle` (plain text), or nil.
function T.note(needle)
  for _, note in ipairs(T.notes) do
    if note.msg:find(needle, 1, true) then
      return note
    end
  end
end

--- Wait until `cond()` is true, or fail naming `what`.
---@param ms integer
---@param cond fun(): boolean
---@param what string
function T.wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then
    error(("timed out after %d ms waiting for %s"):format(ms, what), 0)
  end
end

function T.eq(actual, expected, what)
  if not vim.deep_equal(actual, expected) then
    error(("%s:\n  expected %s\n  got      %s"):format(what, vim.inspect(expected), vim.inspect(actual)), 0)
  end
end

function T.truthy(value, what)
  if not value then
    error(what, 0)
  end
end

--- `needle` occurs (plain text) in the string or in one of the lines.
function T.contains(haystack, needle, what)
  local text = type(haystack) == "table" and table.concat(haystack, "\n") or tostring(haystack)
  if not text:find(needle, 1, true) then
    error(("%s: %q not found in:\n%s"):format(what, needle, text), 0)
  end
end

--- The text of a buffer.
function T.text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

--- The contents of a file on disk.
function T.read(path)
  local file = assert(io.open(path, "rb"))
  local data = file:read("*a")
  file:close()
  return data
end

--- The newest session the plugin knows, once the server answered startSession.
function T.wait_session(ms)
  local session_mod = require("cadenza.session")
  T.wait(ms or 15000, function()
    return session_mod.latest() ~= nil
  end, "the session to start")
  return session_mod.latest()
end

--- Wait for a session's session_end.
function T.wait_end(session, ms)
  T.wait(ms or 15000, function()
    return session.state == "ended"
  end, "session_end of " .. session.id)
  return session
end

local function stop_servers(ms)
  local ok, client_mod = pcall(require, "cadenza.client")
  if not ok then
    return true
  end
  local compat = require("cadenza.compat")
  for _, client in ipairs(client_mod.all()) do
    compat.stop(client)
  end
  return vim.wait(ms, function()
    return #client_mod.all() == 0 and #vim.lsp.get_clients({ name = "cadenza" }) == 0
  end, 50)
end

local function dump()
  local panel = package.loaded["cadenza.panel"]
  if panel then
    T.say("--- Cadenza buffer ---\n%s", table.concat(panel.lines(), "\n"))
  end
  if package.loaded["cadenza.log"] then
    T.say("--- :CadenzaLog ---\n%s", table.concat(require("cadenza.log").lines(), "\n"))
  end
end

--- Run the scenario: on success stop the servers (shutdown, exit) and qall!; on an error
--- print the reason, the Cadenza buffer and the log, and cquit 1.
---@param main fun()
function T.run(main)
  local ok, err = xpcall(main, debug.traceback)
  if not ok then
    T.say("FAIL: %s", tostring(err))
    dump()
    stop_servers(3000)
    vim.cmd("cquit 1")
    return
  end
  if not stop_servers(10000) then
    T.say("FAIL: the server did not exit after shutdown")
    vim.cmd("cquit 1")
    return
  end
  T.say("OK")
  vim.cmd("qall!")
end

return T
