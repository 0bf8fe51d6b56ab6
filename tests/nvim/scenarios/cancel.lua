-- :CadenzaCancel while the model is slow to answer: the session ends `cancelled`, shown in the
-- Cadenza buffer.
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()

  vim.cmd("CadenzaRun Think about it for a long time")
  local session = T.wait_session()
  T.wait(10000, function()
    return T.note("Cadenza: started:") ~= nil
  end, "the session's progress to begin")
  vim.wait(300) -- the session is now waiting on the fake model's held-back reply
  T.eq(session.state, "running", "the session still runs before the cancel")
  T.truthy(require("cadenza").status():find("^Cadenza: "), "the statusline shows the running session")

  local asked = vim.uv.hrtime()
  vim.cmd("CadenzaCancel")
  T.wait_end(session, 10000)
  T.say("cancel took %.0f ms (command to session_end)", (vim.uv.hrtime() - asked) / 1e6)

  T.eq(session.stop_reason, "cancelled", "stop reason")
  T.contains(require("cadenza.panel").lines(), "■ cancelled", "the session end in the Cadenza buffer")
  T.truthy(T.note("cancelling session " .. session.id:sub(1, 8)), "the cancel was acknowledged")
  T.wait(5000, function()
    return T.note("Cadenza: cancelled") ~= nil
  end, "the progress end")
  T.eq(require("cadenza").status(), "", "the statusline is empty again")
end)
