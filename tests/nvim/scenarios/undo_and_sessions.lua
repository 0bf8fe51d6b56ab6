-- :CadenzaUndo answers with the server's cadenza.undoSession result; :CadenzaSessions lists the
-- server's sessions (cadenza.listSessions) and replays the chosen one into the Cadenza buffer
-- (cadenza.loadSession): the task as the person's "> " line, the agent's text, the end.
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

  local listed
  vim.ui.select = function(items, opts, on_choice)
    T.eq(opts.kind, "cadenza.sessions", "the picker kind")
    listed = vim.tbl_map(opts.format_item, items)
    on_choice(items[1])
  end
  local panel = require("cadenza.panel")
  local before = #panel.lines()
  vim.cmd("CadenzaSessions")
  T.wait(10000, function()
    return table.concat(panel.lines(), "\n"):find("loaded %d+ update%(s%); end_turn") ~= nil
  end, "the replayed session")
  T.eq(listed, { ("%s  end_turn         Say hello"):format(session.id:sub(1, 8)) }, "the listed sessions")
  local replay = vim.list_slice(panel.lines(), before + 1)
  T.eq(replay, {
    "",
    ("▶ Say hello  [session %s · openai/test]"):format(session.id:sub(1, 8)),
    "> Say hello",
    "  ▸ movement work",
    "Hello!",
    "■ end_turn after 1 step · context 10 tokens · 5 tokens out · 1 request",
    "  loaded 5 update(s); end_turn", -- movement, agent text, model_reply, session_end + the task
  }, "the replay in the Cadenza buffer")
  T.eq(session.state, "ended", "still ended after the replay")

  vim.cmd("CadenzaLog")
  local log = T.text(0)
  T.eq(vim.api.nvim_buf_get_name(0):match("Cadenza log$"), "Cadenza log", "the log buffer is current")
  T.contains(log, ("session %s started: Say hello"):format(session.id), "the session start in the log")
  T.contains(log, "The server's stderr is in Neovim's LSP log", "the pointer to the LSP log")
end)
