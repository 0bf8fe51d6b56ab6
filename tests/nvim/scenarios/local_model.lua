-- The real embedded model (SmolLM2-135M in llama-server). What a 135M model writes is not
-- asserted: only that the progress ended and a session_end arrived.
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  -- The model's work is bounded: one request of at most 32 tokens, no repair (set in the
  -- person's cadenza.toml by the test). On two starved cores SmolLM2 took 9 minutes for 64 tokens
  -- (prompt 7.8 tokens/s, output 0.17 tokens/s under a load average of 20).
  T.setup({
    init_options = { maxSteps = 1, maxTokens = 32, contextSize = 2048 },
  })

  vim.cmd.edit(vim.fn.fnameescape(T.workspace .. "/app.py"))
  local started = vim.uv.hrtime()
  vim.cmd("CadenzaRun Read app.py and say what greet returns.")
  -- The wait is generous (the work above always ends): a loaded machine makes it slower, not
  -- a failure.
  local session = T.wait_end(T.wait_session(120000), 1200000)
  T.say("session ended %s after %.1f s", tostring(session.stop_reason), (vim.uv.hrtime() - started) / 1e9)

  T.truthy(type(session.stop_reason) == "string", "a stop reason")
  T.contains(require("cadenza.panel").lines(), "■ " .. session.stop_reason, "the session end in the Cadenza buffer")
  T.truthy(T.note("Cadenza: started: Read app.py"), "progress begin")
  T.wait(5000, function()
    return T.note("Cadenza: " .. session.stop_reason) ~= nil
  end, "the progress end")
  T.eq(require("cadenza").status(), "", "no progress left running")
end)
