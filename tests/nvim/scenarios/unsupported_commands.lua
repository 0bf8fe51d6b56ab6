-- :CadenzaUndo answers with the server's cadenza.undoSession result; :CadenzaSessions against
-- the current server, which has no cadenza.listSessions: a clear "not supported yet" message.
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()

  vim.cmd("CadenzaUndo")
  T.truthy(T.note("Cadenza: no session yet (:CadenzaRun starts one)"), "undo without a session")

  -- Without a task, :CadenzaRun asks for one.
  vim.ui.input = function(opts, on_confirm)
    T.eq(opts.prompt, "Cadenza task: ", "the task prompt")
    on_confirm("Say hello")
  end
  vim.cmd("CadenzaRun")
  local session = T.wait_end(T.wait_session())
  T.eq(session.stop_reason, "end_turn", "stop reason")

  vim.cmd("CadenzaUndo")
  T.wait(5000, function()
    return T.note("undid session") ~= nil
  end, "the answer to cadenza.undoSession")
  local undo = T.note("undid session")
  T.eq(undo.msg, ("Cadenza: undid session %s: 0 file(s)"):format(session.id:sub(1, 8)), "the undo message")

  vim.cmd("CadenzaSessions")
  T.wait(5000, function()
    return T.note("does not support listing sessions") ~= nil
  end, "the answer to cadenza.listSessions")
  T.contains(
    T.note("does not support listing sessions").msg,
    "(cadenza.listSessions: it answered Invalid Params: Command name 'cadenza.listSessions' is not defined (-32602))",
    "the sessions message"
  )

  vim.cmd("CadenzaLog")
  local log = T.text(0)
  T.eq(vim.api.nvim_buf_get_name(0):match("Cadenza log$"), "Cadenza log", "the log buffer is current")
  T.contains(log, ("session %s started: Say hello"):format(session.id), "the session start in the log")
  T.contains(log, "cadenza.listSessions failed: Invalid Params", "the failed command in the log")
  T.contains(log, "The server's stderr is in Neovim's LSP log", "the pointer to the LSP log")
end)
