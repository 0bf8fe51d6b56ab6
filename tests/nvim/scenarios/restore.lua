-- :CadenzaRestore: three messages in :CadenzaChat, each turn editing app.py; the cursor on the
-- second message in the Cadenza buffer, :CadenzaRestore puts app.py back as it was before it
-- (in its buffer, through the server's workspace/applyEdit), the message is back in the prompt
-- as typed, and the next message goes on from the conversation before it. Then
-- :CadenzaRestore 1 by number, and a wrong argument is refused with a hint.
local T = require("cadenza_test")

local api = vim.api

local function send(input, lines)
  api.nvim_set_current_buf(input)
  api.nvim_buf_set_lines(input, 0, -1, false, lines)
  api.nvim_feedkeys(vim.keycode("<CR>"), "mx", false)
end

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
  local function wait_turn(n)
    T.wait(20000, function()
      return ends >= n
    end, ("turn %d to end"):format(n))
  end

  vim.cmd.edit(vim.fn.fnameescape(T.workspace .. "/app.py"))
  local app = api.nvim_get_current_buf()
  vim.cmd("CadenzaChat")
  local chat = require("cadenza.chat")
  local panel = require("cadenza.panel")
  local input = chat.input_buf()

  send(input, { "Say hello instead." })
  wait_turn(1)
  send(input, { "Now say bye,", "and @app.py stays small." })
  wait_turn(2)
  send(input, { "Shout it." })
  wait_turn(3)
  T.eq(T.text(app), "def greet():\n    return 'BYE'", "three turns changed the buffer")

  -- The cursor on the second message's second line in the Cadenza buffer.
  local lines = panel.lines()
  local row
  for i, line in ipairs(lines) do
    if line == "> and @app.py stays small." then
      row = i
    end
  end
  T.truthy(row, "the second message is shown: " .. vim.inspect(lines))
  local win = panel.open(true)
  api.nvim_win_set_cursor(win, { row, 0 })
  vim.cmd("CadenzaRestore")
  T.wait(10000, function()
    return T.note("restored to before your message 2")
  end, "the restore")
  T.eq(T.text(app), "def greet():\n    return 'hello'", "the buffer is as before message 2")
  T.eq(T.text(chat.input_buf()), "Now say bye,\nand @app.py stays small.", "the message is back in the prompt")
  T.contains(table.concat(panel.lines(), "\n"), "↺ restored to before your message 2", "the conversation says so")

  send(chat.input_buf(), { "Say bye." })
  wait_turn(4)
  T.eq(T.text(app), "def greet():\n    return 'bye'", "the next message goes on from message 1")

  vim.cmd("CadenzaRestore x")
  T.truthy(T.note("use :CadenzaRestore on one of your messages"), "a wrong argument is refused")
  vim.cmd("CadenzaRestore 1")
  T.wait(10000, function()
    return T.note("restored to before your message 1")
  end, "the restore by number")
  T.eq(T.text(app), "def greet():\n    return 'hi'", "the buffer is as before the session")
  T.eq(T.text(chat.input_buf()), "Say hello instead.", "the first message is back in the prompt")
end)
