-- The agent's edit is undone with Neovim's own `u`, leaving the person's unsaved change.
local T = require("cadenza_test")

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup({ panel = { auto_open = false } })

  local path = T.workspace .. "/app.py"
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { "print(greet())" })
  -- Typing the next command ends a person's undo block; a script says so explicitly
  -- (:h undo-break).
  vim.cmd("let &undolevels = &undolevels")
  local before = T.text(buf)

  vim.cmd("CadenzaRun Make greet say hello")
  local session = T.wait_end(T.wait_session())
  T.eq(session.stop_reason, "end_turn", "stop reason")
  T.eq(T.text(buf), "def greet():\n    return 'hello'\nprint(greet())", "the buffer after the edit")
  T.eq(vim.fn.bufwinid(require("cadenza.panel").buf()), -1, "panel.auto_open = false kept it closed")

  vim.cmd("normal! u")
  T.eq(T.text(buf), before, "u undoes the agent's edit only")
  vim.cmd("normal! u")
  T.eq(T.text(buf), "def greet():\n    return 'hi'", "a second u undoes the person's change")
  vim.cmd("redo")
  vim.cmd("redo")
  T.eq(T.text(buf), "def greet():\n    return 'hello'\nprint(greet())", "redo brings both back")
  T.eq(T.read(path), "def greet():\n    return 'hi'\n", "the disk is untouched")
end)
