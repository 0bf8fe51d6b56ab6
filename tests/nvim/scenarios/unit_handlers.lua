-- Unit tests of the plugin's handlers, called directly (no server): prompts (permission
-- rejected and dismissed, askUser, waitingHuman with and without `opened`), the session states
-- (waiting, resumed, final), capabilities, stale edits, setup validation. test_nvim.py drives
-- the same handlers end to end against the real server.
local T = require("cadenza_test")

--- Call a request handler the way Neovim does: inside a coroutine, the return value being the
--- response. `pending`: return at once with a function that says whether it answered, and
--- one that gives the response.
local function handle(handler, params, pending)
  local response, done = nil, false
  local co = coroutine.create(function()
    response = handler(nil, params, { method = "test", client_id = 0 })
    done = true
  end)
  assert(coroutine.resume(co))
  if pending then
    return function()
      return done
    end, function()
      return response
    end
  end
  T.wait(2000, function()
    return done
  end, "the handler to answer")
  return response
end

--- A session_update notification as the server sends it.
local function update(session_id, u)
  require("cadenza.session").on_update(nil, { sessionId = session_id, update = u }, { client_id = 0 })
end

local PERMISSION = {
  sessionId = "s1",
  toolCall = { toolCallId = "c1", title = "running a command", kind = "execute", rawInput = { command = "rm -rf build" } },
  options = {
    { optionId = "allow-once", name = "Allow once", kind = "allow_once" },
    { optionId = "allow-always", name = "Always allow", kind = "allow_always" },
    { optionId = "reject-once", name = "Reject", kind = "reject_once" },
    { optionId = "reject-always", name = "Always reject", kind = "reject_always" },
  },
}

local function permission_rejected()
  local prompts = require("cadenza.prompts")
  local seen
  vim.ui.select = function(items, opts, on_choice)
    seen = { prompt = opts.prompt, kind = opts.kind, names = vim.tbl_map(opts.format_item, items) }
    on_choice(items[3])
  end
  local response = handle(prompts.request_permission, PERMISSION)
  T.eq(response, { outcome = { outcome = "selected", optionId = "reject-once" } }, "a rejection")
  T.eq(seen, {
    prompt = "Cadenza wants to run `rm -rf build`",
    kind = "cadenza.permission",
    names = { "Allow once", "Always allow", "Reject", "Always reject" },
  }, "the permission prompt with the four options")

  vim.ui.select = function(_, _, on_choice)
    on_choice(nil)
  end
  T.eq(handle(prompts.request_permission, PERMISSION), { outcome = { outcome = "cancelled" } }, "a dismissed prompt")
  T.eq(
    handle(prompts.request_permission, { sessionId = "s1", toolCall = {}, options = {} }),
    { outcome = { outcome = "cancelled" } },
    "no options"
  )
end

local function ask_user()
  local prompts = require("cadenza.prompts")
  vim.ui.input = function(_, on_confirm)
    on_confirm(nil)
  end
  T.eq(handle(prompts.ask_user, { sessionId = "s1", question = "Name?" }), { answer = vim.NIL }, "declined")
  vim.ui.input = function(_, on_confirm)
    on_confirm("")
  end
  T.eq(handle(prompts.ask_user, { sessionId = "s1", question = "Name?" }), { answer = vim.NIL }, "empty is declined")

  local items
  vim.ui.select = function(choices, _, on_choice)
    items = choices
    on_choice(choices[2])
  end
  T.eq(
    handle(prompts.ask_user, { sessionId = "s1", question = "Colour?", options = { "red", "blue" } }),
    { answer = "blue" },
    "an option chosen"
  )
  T.eq(items, { "red", "blue", "Type an answer…" }, "the options and free text")
  vim.ui.select = function(choices, _, on_choice)
    on_choice(choices[#choices])
  end
  vim.ui.input = function(_, on_confirm)
    on_confirm("green")
  end
  T.eq(
    handle(prompts.ask_user, { sessionId = "s1", question = "Colour?", options = { "red" } }),
    { answer = "green" },
    "free text after the options"
  )
end

local function waiting_human()
  local prompts = require("cadenza.prompts")
  local opened = {}
  vim.ui.open = function(uri)
    opened[#opened + 1] = uri
    return nil, nil
  end
  local prompt
  vim.ui.select = function(items, opts, on_choice)
    prompt = opts.prompt
    on_choice(items[1])
  end
  local params = { sessionId = "s1", uri = "http://127.0.0.1:1/login", waitReason = "Log in, please", opened = false }
  T.eq(handle(prompts.waiting_human, params), { action = "continue" }, "continue")
  T.eq(opened, { "http://127.0.0.1:1/login" }, "the page opened with vim.ui.open (the server did not open it)")
  T.eq(prompt, "Log in, please (http://127.0.0.1:1/login). Continue when done:", "the prompt")

  -- opened: the server's window/showDocument opened the page already.
  params.opened = true
  T.eq(handle(prompts.waiting_human, params), { action = "continue" }, "continue after showDocument")
  T.eq(#opened, 1, "not opened twice")
  vim.ui.select = function(items, _, on_choice)
    on_choice(items[2])
  end
  T.eq(handle(prompts.waiting_human, params), { action = "cancel" }, "cancel")

  -- Dismissed: not answered while the session waits; answered (ignored by the server, which
  -- withdrew the request) once a reply resumed it.
  T.capture_notify()
  update("w1", { sessionUpdate = "session_end", stopReason = "waiting_human", message = "Log in", steps = 1, url = params.uri })
  vim.ui.select = function(_, _, on_choice)
    on_choice(nil)
  end
  local answered, response = handle(prompts.waiting_human, { sessionId = "w1", uri = params.uri, waitReason = "Log in", opened = true }, true)
  vim.wait(200)
  T.eq(answered(), false, "a dismissed waitingHuman is not answered while the session waits")
  T.truthy(T.note("waits for you: :CadenzaReply when done in the browser"), "the dismissal names :CadenzaReply")
  update("w1", { sessionUpdate = "session_resume", after = "waiting_human", reply = "" })
  T.wait(2000, answered, "the handler to answer after the resume")
  T.eq(response(), { action = "cancel" }, "the late answer")
end

local function session_states()
  local session_mod = require("cadenza.session")
  local panel = require("cadenza.panel")
  local events = {}
  vim.api.nvim_create_autocmd("User", {
    pattern = { "CadenzaSessionEnd", "CadenzaSessionWaiting" },
    callback = function(ev)
      events[#events + 1] = ev.match .. ":" .. ev.data.stop_reason
    end,
  })
  local s = session_mod.add("abcdef0123", { client_id = 0, task = "Rename the function" })
  update(s.id, { sessionUpdate = "usage_update", used = 3 }) -- the turn's usage
  update(s.id, { sessionUpdate = "some_later_kind", used = 3 }) -- unknown kinds are ignored
  update(s.id, {
    sessionUpdate = "session_end",
    stopReason = "needs_user_input",
    message = "",
    steps = 1,
    missingInfo = "the new name",
    whyNoDefault = "two fit",
  })
  T.eq({ s.state, s.stop_reason, s.question, s.why_no_default }, { "waiting", "needs_user_input", "the new name", "two fit" }, "waiting")
  T.eq(session_mod.latest({ waiting = true }), s, "the newest waiting session")
  T.eq(session_mod.latest({ running = true }) == s, false, "not running")

  -- A decline of its question says how to answer later.
  local prompts = require("cadenza.prompts")
  T.notes = {}
  vim.ui.input = function(_, on_confirm)
    on_confirm(nil)
  end
  T.eq(handle(prompts.ask_user, { sessionId = s.id, question = "the new name" }), { answer = vim.NIL }, "declined")
  T.truthy(T.note("Cadenza: session abcdef01 waits for your answer: :CadenzaReply {answer}"), "the decline names :CadenzaReply")

  update(s.id, { sessionUpdate = "session_resume", after = "needs_user_input", reply = "compute_total" })
  T.eq({ s.state, s.stop_reason, s.question }, { "running", nil, nil }, "running again")
  update(s.id, { sessionUpdate = "candidates", step = 2, tried = 3, kept = 2, passed = { 1, 4, vim.NIL }, why = { "", "", "it was cut off" }, of = 5 })
  update(s.id, { sessionUpdate = "agent_message_chunk", content = { type = "text", text = "Renamed." } })
  update(s.id, { sessionUpdate = "session_end", stopReason = "end_turn", message = "Renamed.", steps = 2 })
  T.eq(s.state, "ended", "final")

  -- A waiting session cancelled: final.
  update("w2", { sessionUpdate = "session_end", stopReason = "waiting_human", message = "Log in", steps = 1 })
  update("w2", { sessionUpdate = "session_end", stopReason = "cancelled", message = "", steps = 1 })
  T.eq(session_mod.get("w2").state, "ended", "cancelled while waiting")
  T.eq(events, {
    "CadenzaSessionWaiting:needs_user_input",
    "CadenzaSessionEnd:end_turn",
    "CadenzaSessionWaiting:waiting_human",
    "CadenzaSessionEnd:cancelled",
  }, "the User events")

  -- Replayed: the person's text as "> " lines, no events.
  local r = session_mod.add("replay0001", { client_id = 0, task = "Say hello", replaying = true })
  update(r.id, { sessionUpdate = "user_message_chunk", content = { type = "text", text = "Say hello\nplease" } })
  update(r.id, { sessionUpdate = "session_end", stopReason = "needs_user_input", message = "Whom?", steps = 1 })
  -- The answer replayed: the resume line with the reply, not the server's wording around it.
  update(r.id, { sessionUpdate = "session_resume", after = "needs_user_input", reply = "Ada" })
  update(r.id, {
    sessionUpdate = "user_message_chunk",
    content = { type = "text", text = "The person answered your question (Whom?): Ada" },
  })
  update(r.id, { sessionUpdate = "session_end", stopReason = "needs_user_input", message = "Whom?", steps = 1 })
  T.truthy(not table.concat(panel.lines(), "\n"):find("The person answered", 1, true), "internal prompt text shown")
  r.replaying = nil
  session_mod.settle(r, { state = "needs_user_input", question = "Whom to greet?" })
  T.eq({ r.state, r.question }, { "waiting", "Whom to greet?" }, "settled after loadSession")
  session_mod.settle(r, { state = "interrupted" })
  T.eq({ r.state, r.stop_reason }, { "ended", "interrupted" }, "settled on a final state")
  T.eq(#events, 4, "no events for a replay")

  local lines = table.concat(panel.lines(), "\n")
  for _, needle in ipairs({
    "⏸ needs_user_input after 1 step · context 3 tokens\n  missing: the new name\n  why no default: two fit\n  waiting for your answer: :CadenzaReply {answer}, :CadenzaCancel stops",
    -- The final message was streamed: written once.
    "  ↻ resumed with your answer: compute_total\n  Tried 3 replies against the tests on copies of the workspace; kept reply 2: 4 of 5 tests pass with it (each reply: 1; 4; not judged: it was cut off).\nRenamed.\n■ end_turn after 2 steps\n",
    "  ↻ resumed: done in the browser",
    "> Say hello\n> please\n⏸ needs_user_input after 1 step\n  Whom?",
    "  ↻ resumed with your answer: Ada\n⏸ needs_user_input after 1 step\n  Whom?",
  }) do
    T.contains(lines, needle, "the Cadenza buffer")
  end
end

local function capabilities()
  local caps = require("cadenza.client").capabilities()
  T.eq(caps.experimental.cadenza, {
    askUser = true,
    requestPermission = true,
    waitingHuman = true,
    codeIntelligence = { diagnostics = true, references = true, definition = true, rename = true },
  }, "experimental.cadenza")
  T.eq(caps.window.showDocument.support, true, "window.showDocument.support (the server opens pages first)")
end

local function stale_edit_refused()
  local client = require("cadenza.client")
  local path = T.workspace .. "/stale.py"
  vim.fn.writefile({ "x = 1" }, path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  local version = vim.b[buf].changedtick -- what didOpen sent (Neovim versions are changedticks)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "x = 2" }) -- the person typed meanwhile
  local edit = {
    documentChanges = {
      {
        textDocument = { uri = vim.uri_from_fname(path), version = version },
        edits = { { range = { start = { line = 0, character = 4 }, ["end"] = { line = 0, character = 5 } }, newText = "3" } },
      },
    },
  }
  local response = client.apply_edit(nil, { edit = edit }, { client_id = 0 })
  T.eq(response.applied, false, "a stale edit is refused")
  T.contains(response.failureReason, "changed in the editor since the agent read it", "the reason")
  T.eq(T.text(buf), "x = 2", "the buffer is untouched")
end

local function setup_validation()
  local cadenza = require("cadenza")
  local function fails(opts, needle)
    local ok, err = pcall(cadenza.setup, opts)
    T.truthy(not ok, "setup should fail for " .. vim.inspect(opts))
    T.contains(tostring(err), needle, "the setup error")
  end
  fails({ modle = "openai/x" }, "unknown option modle")
  fails({ model = "gpt" }, "model")
  fails({ panel = { position = "left" } }, "panel.position")
  fails({ cmd = {} }, "cmd")
  cadenza.setup({ model = "openai/x", init_options = { maxSteps = 3 } })
  local config = require("cadenza.config")
  T.eq(config.init_options(), { maxSteps = 3, model = "openai/x" }, "init_options with the model")
  T.eq(config.cmd_env(), { CADENZA_MODEL = "openai/x" }, "the model of setup() as CADENZA_MODEL")
  cadenza.setup()
  T.eq(config.init_options(), nil, "no init options by default (not an empty JSON array)")
  T.eq(config.cmd_env(), nil, "no server environment by default")
  T.eq(config.version_cmd({ "python3", "-m", "cadenza", "serve" }), { "python3", "-m", "cadenza", "--version" }, "version command")
end

local function unsupported_detection()
  local client = require("cadenza.client")
  local fake = { server_capabilities = { executeCommandProvider = { commands = { "cadenza.startSession" } } } }
  local pygls = { code = -32602, message = "Invalid Params: Command name 'cadenza.undoSession' is not defined" }
  T.eq(client.is_unsupported(fake, "cadenza.undoSession", pygls), true, "unknown command")
  T.eq(client.is_unsupported(fake, "cadenza.undoSession", { code = -32601, message = "x" }), true, "method not found")
  T.eq(
    client.is_unsupported(fake, "cadenza.startSession", { code = -32602, message = "task: Field required" }),
    false,
    "bad arguments of a known command"
  )
end

--- Loading every module and calling setup() adds no global variable.
local function no_globals(before)
  for _, name in ipairs({ "config", "client", "commands", "panel", "progress", "prompts", "session", "health", "log", "queue" }) do
    require("cadenza." .. name)
  end
  require("cadenza").setup({ model = "openai/x" })
  local added = {}
  for key in pairs(_G) do
    if not before[key] then
      added[#added + 1] = tostring(key)
    end
  end
  T.eq(added, {}, "globals added by the plugin")
end

--- doc/cadenza.txt builds help tags without errors (duplicate tags are errors).
local function help_tags()
  local doc = vim.api.nvim_get_runtime_file("doc/cadenza.txt", false)[1]
  T.truthy(doc, "doc/cadenza.txt is on the runtimepath")
  local dir = T.workspace .. "/doc"
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile(vim.fn.readfile(doc), dir .. "/cadenza.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(dir))
  local tags = T.read(dir .. "/tags")
  for _, tag in ipairs({ "cadenza", "cadenza-setup", ":CadenzaRun", ":CadenzaCancel", ":CadenzaReply", ":CadenzaUndo", ":CadenzaSessions", ":CadenzaLog", ":CadenzaSteer", ":CadenzaUnqueue", "cadenza-queue", "cadenza-plan", "cadenza.status()", "cadenza-health", "cadenza-waiting", "CadenzaSessionEnd", "CadenzaSessionWaiting" }) do
    T.contains(tags, tag .. "\t", "the help tag " .. tag)
  end
end

--- A server command that does not exist: an error message, no Lua error, nothing left running.
local function missing_server()
  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg)
    notes[#notes + 1] = msg
  end
  require("cadenza").setup({ cmd = { "cadenza-not-installed", "serve" } })
  vim.cmd("CadenzaRun Say hello")
  vim.notify = notify
  T.contains(notes, "Cadenza: could not start `cadenza-not-installed serve`: install the server from a checkout of the Cadenza repository (python3 -m pip install /path/to/cadenza) or set `cmd` in setup(); :checkhealth cadenza says more", "the message")
  T.eq(require("cadenza.client").all(), {}, "no client")
  require("cadenza").setup()
end

T.run(function()
  local before = {}
  for key in pairs(_G) do
    before[key] = true
  end
  vim.cmd("runtime plugin/cadenza.lua")
  no_globals(before)
  permission_rejected()
  ask_user()
  waiting_human()
  session_states()
  capabilities()
  stale_edit_refused()
  setup_validation()
  unsupported_detection()
  help_tags()
  missing_server()
end)
