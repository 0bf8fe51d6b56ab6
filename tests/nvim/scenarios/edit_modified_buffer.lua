-- A task with a range edits an open, modified buffer: the agent reads and edits the unsaved
-- text (the line it edits exists only in the buffer), the disk is untouched until :write.
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.eq(vim.fn.exists(":CadenzaRun"), 2, ":CadenzaRun is defined by plugin/cadenza.lua")
  T.eq(package.loaded["cadenza.client"], nil, "no module beyond the commands before a command runs")
  T.setup()

  local path = T.workspace .. "/app.py"
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "print(greet())" }) -- unsaved
  T.truthy(vim.bo[buf].modified, "the buffer is modified before the run")

  vim.cmd("3CadenzaRun Print the greeting in upper case")
  local session = T.wait_session()
  T.wait_end(session)

  T.eq(session.stop_reason, "end_turn", "stop reason")
  T.eq(T.text(buf), "def greet():\n    return 'hi'\nprint(greet().upper())", "the buffer after the edit")
  T.truthy(vim.bo[buf].modified, "the edited buffer is still unsaved")
  T.eq(T.read(path), "def greet():\n    return 'hi'\n", "the disk before :write")

  local panel = require("cadenza.panel").lines()
  T.contains(panel, "▶ Print the greeting in upper case …", "the Cadenza buffer's header")
  T.contains(panel, "✓ editing app.py", "the tool call, completed")
  T.contains(panel, "~ app.py: -1 +1 lines", "the diff summary")
  T.contains(panel, "■ end_turn after 2 steps", "the session end")
  -- The final answer was streamed as agent text: the end does not write it again.
  local answers = vim.tbl_filter(function(line)
    return line:find("It now prints GREETING.", 1, true) ~= nil
  end, panel)
  T.eq(answers, { "It now prints GREETING." }, "the final answer, once")
  T.contains(panel, "■ end_turn after 2 steps · context 10 tokens · 10 tokens out · 2 requests", "the turn's usage")
  T.eq(vim.bo[require("cadenza.panel").buf()].filetype, "markdown", "the Cadenza buffer's filetype")
  T.eq(
    require("cadenza").statusline(),
    "Cadenza: end_turn · ctx 10 · 10 out",
    "the statusline component after the end"
  )
  T.contains(panel, "unsaved: app.py", "the unsaved-file hint")
  T.truthy(vim.fn.bufwinid(require("cadenza.panel").buf()) ~= -1, "the Cadenza buffer is shown")
  T.eq(vim.api.nvim_get_current_buf(), buf, "opening the Cadenza buffer kept the cursor in app.py")

  T.truthy(T.note("Cadenza: started: Print the greeting in upper case"), "progress begin notified")
  T.wait(5000, function()
    return T.note("Cadenza: end_turn: It now prints GREETING.") ~= nil
  end, "the progress end notified")
  T.eq(require("cadenza").status(), "", "the statusline is empty once the session ended")

  vim.cmd.write()
  T.eq(T.read(path), "def greet():\n    return 'hi'\nprint(greet().upper())\n", "the disk after :write")
end)
