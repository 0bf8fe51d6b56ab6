-- cadenza/askUser is answered through vim.ui.input (stubbed as a UI plugin would answer).
local T = require("cadenza_test")

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  local prompts = {}
  vim.ui.input = function(opts, on_confirm)
    prompts[#prompts + 1] = opts.prompt
    on_confirm("blue")
  end

  vim.cmd("CadenzaRun Paint the button")
  local session = T.wait_end(T.wait_session())

  T.eq(session.stop_reason, "end_turn", "stop reason")
  T.eq(prompts, { "Which colour should the button be? " }, "the question asked through vim.ui.input")
  T.eq(require("cadenza.panel").lines(), {
    ("▶ Paint the button  [session %s · openai/test]"):format(session.id:sub(1, 8)),
    "  ▸ movement work",
    "  ✓ asking the person",
    "Painting it blue.",
    "■ end_turn after 2 steps · context 10 tokens · 10 tokens out · 2 requests", -- the final message streamed above: once
  }, "the Cadenza buffer")
end)
