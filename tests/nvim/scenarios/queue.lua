-- Messages while a turn runs: two are queued in the chat (shown in the Cadenza buffer), one is
-- dropped with :CadenzaUnqueue, the other steered into the turn with :CadenzaSteer; a third,
-- queued later, goes as the next turn once the first ends. The agent's plan is shown as
-- [x] / [ ] lines, written again as its steps finish.
local T = require("cadenza_test")

local api = vim.api

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  local ends = 0
  api.nvim_create_autocmd("User", {
    pattern = "CadenzaSessionEnd",
    callback = function()
      ends = ends + 1
    end,
  })
  local chat = require("cadenza.chat")
  local panel = require("cadenza.panel")
  local queue = require("cadenza.queue")

  vim.cmd("CadenzaChat Tidy up app.py")
  -- The model's second reply is held back (the fake server's delay): the turn runs meanwhile.
  T.wait(15000, function()
    return table.concat(panel.lines(), "\n"):find("plan (0 of 2 done)", 1, true) ~= nil
  end, "the plan's first version")
  local session = chat.session()
  T.eq(session.state, "running", "the turn runs")

  T.eq(chat.send("Use single quotes"), true, "a message while the turn runs is taken")
  T.eq(chat.send("drop me"), true, "a second one too")
  T.eq(queue.list(session.id), { "Use single quotes", "drop me" }, "both are queued, in order")
  T.contains(panel.lines(), "⏳ queued #2: drop me", "the queue is shown")

  vim.cmd("CadenzaUnqueue")
  T.eq(queue.list(session.id), { "Use single quotes" }, "the last queued one is dropped")
  T.contains(panel.lines(), "✗ unqueued #2: drop me", "the drop is shown")

  vim.cmd("CadenzaSteer")
  T.wait(10000, function()
    return table.concat(panel.lines(), "\n"):find("> Use single quotes", 1, true) ~= nil
  end, "the steered message to be shown")
  T.eq(queue.list(session.id), {}, "the steered message left the queue")
  T.eq(ends, 0, "the turn still runs")

  T.eq(chat.send("Now add a test"), true, "another message while the turn runs")
  T.eq(queue.list(session.id), { "Now add a test" }, "queued for the turn's end")

  T.wait(20000, function()
    return ends >= 2
  end, "the queued message's turn to end")
  T.eq(queue.list(session.id), {}, "the queue is empty")
  local text = table.concat(panel.lines(), "\n")
  T.contains(text, "plan (0 of 2 done):\n    [ ] Quote style  (in progress)\n    [ ] Docstring", "the plan as it began")
  T.contains(text, "plan (1 of 2 done):\n    [x] Quote style\n    [ ] Docstring  (in progress)", "the plan half done")
  T.contains(text, "> Now add a test", "the queued message went as the next turn")
  T.contains(text, "Added the test.", "the next turn's answer")
  T.eq(require("cadenza.session").latest().id, session.id, "the same conversation")

  -- No turn runs now: a steer is refused with a reason, nothing is sent.
  vim.cmd("CadenzaSteer too late")
  T.truthy(T.note("no turn is running"), "why the steer was not sent")
end)
