-- Server → client prompts through vim.ui.input / vim.ui.select (so dressing, telescope or
-- snacks UIs apply): cadenza/askUser, cadenza/requestPermission, cadenza/waitingHuman.
-- (client.lua declares all three in experimental.cadenza.)
--
-- A session that stopped with needs_user_input or waiting_human waits for the person: the
-- server asks with one of these prompts, and a dismissed prompt leaves the session waiting
-- for :CadenzaReply (cadenza.replySession).
--
-- Neovim runs each server request handler in a coroutine (the way its own
-- window/showMessageRequest handler waits for vim.ui.select): a handler yields until the
-- person answers, and its return value is the response. Outside a coroutine the prompts fall
-- back to the blocking vim.fn.input / vim.fn.inputlist.
local M = {}

local OTHER = "Type an answer…"

--- Wait for a callback-style UI function inside a coroutine.
---@param start fun(done: fun(value: any))
---@return any value
---@return boolean waited false when not inside a (non-main) coroutine
local function await(start)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return nil, false
  end
  start(function(value)
    -- Resume on the next tick: a synchronous vim.ui.* would resume before the yield.
    vim.schedule(function()
      coroutine.resume(co, value)
    end)
  end)
  return coroutine.yield(), true
end

--- vim.ui.input that waits for the answer; nil when dismissed.
---@param opts table vim.ui.input options
---@return string?
function M.input(opts)
  local value, waited = await(function(done)
    vim.ui.input(opts, done)
  end)
  if waited then
    return value
  end
  local cancelled = "\0cancelled"
  local answer = vim.fn.input({ prompt = opts.prompt or "", cancelreturn = cancelled })
  if answer == cancelled then
    return nil
  end
  return answer
end

--- vim.ui.select that waits for the choice; nil when dismissed.
---@param items any[]
---@param opts table vim.ui.select options
---@return any?
function M.select(items, opts)
  local value, waited = await(function(done)
    vim.ui.select(items, opts, done)
  end)
  if waited then
    return value
  end
  local format = opts.format_item or tostring
  local lines = { opts.prompt or "Select:" }
  for i, item in ipairs(items) do
    lines[#lines + 1] = ("%d. %s"):format(i, format(item))
  end
  local index = vim.fn.inputlist(lines)
  return items[index]
end

local function label(item)
  if type(item) == "table" then
    return tostring(item.label or item.title or item.name or vim.inspect(item))
  end
  return tostring(item)
end

local function value_of(item)
  if type(item) == "table" then
    return tostring(item.value or item.label or item.title or item.name)
  end
  return tostring(item)
end

local function short(id)
  return tostring(id):sub(1, 8)
end

--- The session `id` when it waits for the person (after `stop_reason`), else nil.
local function waiting_session(id, stop_reason)
  local session = type(id) == "string" and require("cadenza.session").get(id)
  if session and session.state == "waiting" and session.stop_reason == stop_reason then
    return session
  end
end

--- cadenza/askUser {sessionId, question, whyNoDefault?, options?} → {answer: string|null}.
--- A dismissed prompt or an empty answer is a decline (null); for a session that waits after
--- needs_user_input, a decline leaves it waiting for :CadenzaReply.
function M.ask_user(_, params)
  params = type(params) == "table" and params or {}
  local question = type(params.question) == "string" and params.question or "Cadenza asks:"
  local prompt = question
  if type(params.whyNoDefault) == "string" and params.whyNoDefault ~= "" then
    prompt = ("%s (%s)"):format(question, params.whyNoDefault)
  end
  local answer
  if type(params.options) == "table" and #params.options > 0 then
    local items = vim.list_extend(vim.deepcopy(params.options), { OTHER })
    local choice = M.select(items, {
      prompt = prompt,
      kind = "cadenza.ask_user",
      format_item = label,
    })
    if choice == OTHER then
      answer = M.input({ prompt = question .. " " })
    elseif choice ~= nil then
      answer = value_of(choice)
    end
  else
    answer = M.input({ prompt = prompt .. " " })
  end
  if answer == nil or answer == "" then
    local waiting = waiting_session(params.sessionId, "needs_user_input")
    if waiting then
      vim.notify(
        ("Cadenza: session %s waits for your answer: :CadenzaReply {answer} (or :CadenzaCancel)"):format(
          short(waiting.id)
        ),
        vim.log.levels.WARN,
        { title = "Cadenza" }
      )
    end
    return { answer = vim.NIL }
  end
  return { answer = answer }
end

--- The permission prompt: a shell command by its command line ("Cadenza wants to run `pytest`"),
--- another tool by the call's title, which the server words as a gerund ("deleting old.py":
--- "Cadenza asks before deleting old.py").
local function describe_call(tool_call)
  local raw = tool_call.rawInput
  if type(raw) == "table" and type(raw.command) == "string" then
    local command = vim.trim(raw.command)
    if #command <= 120 and not command:find("\n", 1, true) then
      return ("Cadenza wants to run `%s`"):format(command)
    end
    return ("Cadenza wants to run a command: %s"):format(command)
  end
  local title = vim.trim(tool_call.title or "")
  if title:match("^%l+ing%f[%A]") then
    return ("Cadenza asks before %s"):format(title)
  end
  return ("Cadenza asks before calling %s"):format(title ~= "" and title or tool_call.kind or "a tool")
end

--- cadenza/requestPermission {sessionId, toolCall, options: [{optionId, name, kind}]}
--- → {outcome: {outcome: "selected", optionId} | {outcome: "cancelled"}} (ACP's shape).
function M.request_permission(_, params)
  params = type(params) == "table" and params or {}
  local options = type(params.options) == "table" and params.options or {}
  if #options == 0 then
    return { outcome = { outcome = "cancelled" } }
  end
  local tool_call = type(params.toolCall) == "table" and params.toolCall or {}
  local choice = M.select(options, {
    prompt = describe_call(tool_call),
    kind = "cadenza.permission",
    format_item = function(option)
      return option.name or option.optionId
    end,
  })
  if type(choice) ~= "table" or choice.optionId == nil then
    return { outcome = { outcome = "cancelled" } }
  end
  return { outcome = { outcome = "selected", optionId = choice.optionId } }
end

--- Open `uri` with vim.ui.open; a warning when that fails.
---@param uri string
local function open_page(uri)
  local ok, cmd_or_err, err = pcall(vim.ui.open, uri)
  if not ok or err then
    local why = tostring(ok and err or cmd_or_err)
    vim.notify(
      ("Cadenza: could not open %s (%s); open it yourself"):format(uri, why),
      vim.log.levels.WARN,
      { title = "Cadenza" }
    )
  end
end

--- A person is needed in the browser: open the page (unless `opened`: the server opened it
--- with window/showDocument already), then ask Continue or Cancel.
---@param uri string?
---@param reason string?
---@param opened? boolean
---@return "continue"|"cancel"|nil nil: the prompt was dismissed
function M.confirm_waiting_human(uri, reason, opened)
  local has_uri = type(uri) == "string" and uri ~= ""
  if has_uri and opened ~= true then
    open_page(uri)
  end
  local prompt = type(reason) == "string" and reason ~= "" and reason
    or "The agent waits for you in the browser"
  if has_uri then
    prompt = ("%s (%s)"):format(prompt, uri)
  end
  local choice = M.select({ "Continue", "Cancel" }, {
    prompt = prompt .. ". Continue when done:",
    kind = "cadenza.waiting_human",
  })
  if choice == "Continue" then
    return "continue"
  elseif choice == "Cancel" then
    return "cancel"
  end
  return nil
end

--- cadenza/waitingHuman {sessionId, waitReason, uri?, opened} → {action: "continue" | "cancel"}.
--- A dismissed prompt is not answered: the session keeps waiting until :CadenzaReply (or
--- :CadenzaCancel); the server then withdraws this request, and the handler answers "cancel",
--- which the server ignores for a withdrawn request.
function M.waiting_human(_, params)
  params = type(params) == "table" and params or {}
  local action = M.confirm_waiting_human(params.uri or params.url, params.waitReason, params.opened)
  if action then
    return { action = action }
  end
  local id = params.sessionId
  vim.notify(
    ("Cadenza: session %s waits for you: :CadenzaReply when done in the browser (or :CadenzaCancel)"):format(
      short(id)
    ),
    vim.log.levels.WARN,
    { title = "Cadenza" }
  )
  -- (Outside a coroutine nothing can wait: "cancel" at once.)
  await(function(done)
    require("cadenza.session").when_not_waiting(id, function()
      done(nil)
    end)
  end)
  return { action = "cancel" }
end

return M
