-- :CadenzaChat: three messages in one conversation, typed in the prompt window and sent
-- with <CR>. The second @mentions a file (completed by the prompt's omnifunc) and refers to
-- the first; the third is a workspace command completed after "/". The Cadenza buffer shows
-- each message as a "> " line and each answer once.
local T = require("cadenza_test")

local api = vim.api

--- Type `lines` into the prompt and press <CR> as a person would (the mapping runs).
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
  T.eq(api.nvim_get_current_buf(), input, "the cursor is in the prompt")
  T.eq(vim.bo[input].filetype, "markdown", "the prompt's filetype")
  T.eq(vim.bo[panel.buf()].filetype, "markdown", "the conversation's filetype")
  T.truthy(vim.fn.bufwinid(panel.buf()) ~= -1, "the conversation is shown")

  send(input, { "My name is Ada.", "Please remember it." })
  wait_turn(1)
  local session = require("cadenza.session").latest()
  T.eq(chat.session().id, session.id, "the chat goes on in the session it started")
  T.eq(T.text(input), "", "the prompt is empty after sending")

  -- Completion of "@ap" in the prompt: the file and @buffer (the buffer the chat came from).
  api.nvim_buf_set_lines(input, 0, -1, false, { "What does @ap" })
  api.nvim_win_set_cursor(0, { 1, #"What does @ap" })
  local mentions = require("cadenza.mentions")
  T.eq(mentions.omnifunc(1, ""), #"What does ", "completion starts at the @")
  local words = vim.tbl_map(function(item)
    return item.word
  end, mentions.omnifunc(0, "@ap"))
  T.eq(words, { "@app.py" }, "the completion of @ap")
  local all = vim.tbl_map(function(item)
    return item.word
  end, mentions.omnifunc(0, "@"))
  T.eq(all[1], "@buffer", "@buffer comes first")
  T.truthy(vim.tbl_contains(all, "@app.py"), "@app.py is offered for @")
  T.truthy(not vim.tbl_contains(all, "@.git/HEAD"), "hidden folders are not offered")
  T.eq(mentions.start_of("mail me@home", 12), -3, "an address is not a mention")

  send(input, { "What does @app.py return, and what is my name?" })
  wait_turn(2)
  T.eq(require("cadenza.session").latest().id, session.id, "no new session for the follow-up")

  -- "/" completes the server's commands: the workspace's prompt file among the workflows.
  api.nvim_buf_set_lines(input, 0, -1, false, { "/ex" })
  api.nvim_win_set_cursor(0, { 1, 3 })
  T.eq(mentions.omnifunc(1, ""), 0, "a command completes from the line's start")
  local commands = mentions.omnifunc(0, "/ex")
  T.eq(#commands, 1, "one command matches /ex")
  T.eq({ commands[1].word, commands[1].menu, commands[1].info }, { "/explain ", "what to explain", "Explain something simply" }, "the prompt file's command")
  local names = vim.tbl_map(function(item)
    return item.abbr
  end, mentions.omnifunc(0, "/"))
  T.truthy(vim.tbl_contains(names, "/plan-implement-review"), "workflows are commands too: " .. vim.inspect(names))

  -- (A message sent while a turn runs is queued for its end: scenarios/queue.lua.)
  send(input, { "/explain the greeting" })
  wait_turn(3)

  local text = table.concat(panel.lines(), "\n")
  T.contains(text, "> My name is Ada.\n> Please remember it.", "turn 1's whole message")
  T.contains(text, "> What does @app.py return, and what is my name?\n  with app.py\n", "turn 2's message as typed, and its file")
  T.truthy(not text:find("Context from the editor", 1, true), "not the text the model got")
  T.contains(text, "> /explain the greeting", "turn 3's message as typed")
  for _, answer in ipairs({ "Nice to meet you, Ada.", "It returns 'hi', and you are Ada.", "You are welcome." }) do
    local _, count = text:gsub(vim.pesc(answer), "")
    T.eq(count, 1, ("%q shown once"):format(answer))
  end
  T.eq(app ~= input, true, "the chat did not replace the file's buffer")
  -- 10 prompt and 5 completion tokens at 1,000 and 2,000 per million: $0.02 for the turn.
  T.contains(require("cadenza").statusline(), "$0.0200", "the turn's cost in the statusline")

  -- A new conversation whose first message mentions a file: the file goes as startSession's
  -- context (the server reads it), and the message is shown as typed.
  chat.open({ new = true })
  send(chat.input_buf(), { "Check @app.py please" })
  wait_turn(4)
  T.truthy(require("cadenza.session").latest().id ~= session.id, "the first message started a new session")
  text = table.concat(panel.lines(), "\n")
  T.contains(text, "> Check @app.py please", "the first message as typed")
  T.truthy(not text:find("Files I mention", 1, true), "the mention is not pasted into the task")
end)
