-- The real embedded model (SmolLM2-135M in llama-server). What a 135M model writes is not
-- asserted: only that the progress ended and a session_end arrived.
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup({ init_options = { maxSteps = 2, maxTokens = 64, contextSize = 2048 } })

  vim.cmd.edit(vim.fn.fnameescape(T.workspace .. "/app.py"))
  local started = vim.uv.hrtime()
  vim.cmd("CadenzaRun Read app.py and say what greet returns.")
  -- The model's work is bounded by maxSteps and maxTokens above; the wait is generous, so a
  -- loaded machine (both cores busy) makes it slower, never a failure.
  local session = T.wait_end(T.wait_session(120000), 600000)
  T.say("session ended %s after %.1f s", tostring(session.stop_reason), (vim.uv.hrtime() - started) / 1e9)

  T.truthy(type(session.stop_reason) == "string", "a stop reason")
  T.contains(require("cadenza.panel").lines(), "■ " .. session.stop_reason, "the session end in the Cadenza buffer")
  T.truthy(T.note("Cadenza: started: Read app.py"), "progress begin")
  T.wait(5000, function()
    return T.note("Cadenza: " .. session.stop_reason) ~= nil
  end, "the progress end")
  T.eq(require("cadenza").status(), "", "no progress left running")
end)
