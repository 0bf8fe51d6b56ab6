-- needs_user_input end to end: the session waits (not ends), the plugin's ask prompt is
-- answered and the session resumes; the second question is dismissed, :CadenzaSessions lists
-- the session as waiting with its question, and :CadenzaReply answers it later; end_turn.
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  local events = {}
  vim.api.nvim_create_autocmd("User", {
    pattern = { "CadenzaSessionEnd", "CadenzaSessionWaiting" },
    callback = function(ev)
      events[#events + 1] = ("%s:%s"):format(ev.match, ev.data.stop_reason)
    end,
  })
  local prompts = {}
  vim.ui.input = function(opts, on_confirm)
    prompts[#prompts + 1] = opts.prompt
    -- The first question is answered in the prompt; the second one is dismissed.
    on_confirm(#prompts == 1 and "compute_total" or nil)
  end

  vim.cmd("CadenzaRun Rename the function")
  local session = T.wait_session()
  T.wait(15000, function()
    return #prompts == 2 and session.state == "waiting"
  end, "the second question, dismissed")
  T.wait(5000, function()
    return T.note("waits for your answer") ~= nil
  end, "the note that the session waits")
  T.eq(session.stop_reason, "needs_user_input", "waiting stop reason")
  T.eq(session.question, "the module to put it in", "the question")
  T.eq(prompts, {
    "the name of the new function (two names fit equally well) ",
    "the module to put it in (utils and helpers both exist) ",
  }, "the questions asked through vim.ui.input")

  -- The server lists it as waiting, with its question.
  local listed
  vim.ui.select = function(items, opts, on_choice)
    listed = vim.tbl_map(opts.format_item, items)
    on_choice(nil)
  end
  vim.cmd("CadenzaSessions")
  T.wait(5000, function()
    return listed ~= nil
  end, "the session list")
  T.eq(listed, {
    ("%s  needs_user_input Rename the function — the module to put it in"):format(session.id:sub(1, 8)),
  }, "the listed sessions")

  -- Answered later.
  vim.cmd("CadenzaReply utils")
  T.wait_end(session)
  T.eq(session.stop_reason, "end_turn", "stop reason")
  T.truthy(T.note(("Cadenza: session %s resumed"):format(session.id:sub(1, 8))), "the reply's answer")
  T.eq(events, {
    "CadenzaSessionWaiting:needs_user_input",
    "CadenzaSessionWaiting:needs_user_input",
    "CadenzaSessionEnd:end_turn",
  }, "the User events")
  T.eq(require("cadenza.panel").lines(), {
    ("▶ Rename the function  [session %s · openai/test]"):format(session.id:sub(1, 8)),
    "  ▸ movement work",
    "  ✓ complete",
    "⏸ needs_user_input after 1 step · context 10 tokens · 5 tokens out · 1 request",
    "  missing: the name of the new function",
    "  why no default: two names fit equally well",
    "  waiting for your answer: :CadenzaReply {answer}, :CadenzaCancel stops",
    "  ↻ resumed with your answer: compute_total",
    "  ▸ movement work",
    "  ✓ complete",
    "⏸ needs_user_input after 2 steps · context 10 tokens · 5 tokens out · 1 request",
    "  missing: the module to put it in",
    "  why no default: utils and helpers both exist",
    "  waiting for your answer: :CadenzaReply {answer}, :CadenzaCancel stops",
    "  ↻ resumed with your answer: utils",
    "  ▸ movement work",
    "Renamed to compute_total in utils.",
    "■ end_turn after 3 steps · context 10 tokens · 5 tokens out · 1 request",
  }, "the Cadenza buffer")
end)
