-- :CadenzaUndo puts back what the session changed, through the server (cadenza.undoSession):
-- the server sends workspace/applyEdit with the buffer's version and Neovim applies it.
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup({ panel = { auto_open = false } })

  local path = T.workspace .. "/app.py"
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local before = T.text(buf)

  vim.cmd("CadenzaRun Make greet say hello")
  local session = T.wait_end(T.wait_session())
  T.eq(session.stop_reason, "end_turn", "stop reason")
  T.eq(T.text(buf), "def greet():\n    return 'hello'", "the buffer after the edit")

  vim.cmd("CadenzaUndo")
  T.wait(5000, function()
    return T.note("undid session") ~= nil
  end, "the answer to cadenza.undoSession")
  T.eq(
    T.note("undid session").msg,
    ("Cadenza: undid session %s: 1 file(s)"):format(session.id:sub(1, 8)),
    "the undo message"
  )
  T.eq(T.text(buf), before, "the buffer is back as before the session")
  T.eq(T.read(path), "def greet():\n    return 'hi'\n", "the disk is untouched")
end)
