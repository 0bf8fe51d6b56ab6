-- The "Cadenza" buffer's content: session headers, the agent's text, tool calls with their
-- status, movements, plans and session ends (cadenza.panel_buffer does the writing).
local compat = require("cadenza.compat")
local pb = require("cadenza.panel_buffer")

local M = {}

local ICONS = {
  pending = "○",
  in_progress = "…",
  completed = "✓",
  failed = "✗",
}
local HL = {
  pending = "CadenzaToolPending",
  in_progress = "CadenzaToolRunning",
  completed = "CadenzaToolDone",
  failed = "CadenzaToolFailed",
}

local state = pb.state
local append = pb.append
local is_empty = pb.is_empty

M.buf = pb.buf
M.lines = pb.lines
M.open = pb.open

local function short(id)
  return tostring(id):sub(1, 8)
end

local function relative(path, root)
  if type(path) ~= "string" then
    return tostring(path)
  end
  if root and path:sub(1, #root + 1) == root .. "/" then
    return path:sub(#root + 2)
  end
  return path
end

--- Write a session header when `session` is not the one written last (or always: `force`).
---@param session table {id, task?, root?, model?}
---@param force? boolean
---@return integer? row the header's row (0-based), when it was written
function M.header(session, force)
  local buf = M.buf() -- first, as creating the buffer resets the writer
  if state.writer == session.id and not force then
    return
  end
  state.writer = session.id
  if force then -- a replay writes the session's messages again
    require("cadenza.restore").forget(session.id)
  end
  local task = (session.task or ""):gsub("\n.*", " …")
  local model = session.model and (" · " .. session.model) or ""
  local lines = { ("▶ %s  [session %s%s]"):format(task, short(session.id), model) }
  if not is_empty(buf) then
    table.insert(lines, 1, "")
  end
  return append(lines, "CadenzaHeader") + #lines - 1
end

--- Stream agent text (chunks continue the current line until a newline).
---@param session table
---@param text string
function M.text(session, text)
  M.header(session)
  if text == "" then
    return
  end
  pb.stream(text)
end

--- The person's text (the task, an answer) as `cadenza.loadSession` replays it: "> " lines.
---@param session table
---@param text string
---@param uncounted? boolean not a turn of its own for :CadenzaRestore (the task under its
--- header, counted there; a message steered into a running turn)
function M.user_text(session, text, uncounted)
  M.header(session)
  if text == "" then
    return
  end
  local lines = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    lines[#lines + 1] = "> " .. line
  end
  local row = append(lines, "CadenzaUser")
  if not uncounted then -- one of the person's messages (:CadenzaRestore counts them)
    require("cadenza.restore").remember(session.id, row)
  end
end

--- A waiting session runs again (session_resume {after, reply}).
---@param session table
---@param update table
function M.resume(session, update)
  M.header(session)
  local reply = type(update.reply) == "string" and update.reply or ""
  -- `kind` (answer, browser, prompt) when the server says it; else from the stop reason.
  local kind = update.kind
  if kind ~= "answer" and kind ~= "browser" and kind ~= "prompt" then
    kind = update.after == "waiting_human" and "browser" or update.after == "needs_user_input" and "answer" or "prompt"
  end
  if kind == "prompt" then
    -- A follow-up after an ended turn (cadenza.promptSession): the person's message.
    append({ "" })
    M.user_text(session, reply)
    return
  end
  local line
  if kind == "browser" then
    line = "  ↻ resumed: done in the browser" .. (reply ~= "" and (" — " .. reply) or "")
  else
    line = "  ↻ resumed with your answer: " .. reply
  end
  -- An answer is one of your messages too (:CadenzaRestore counts it).
  require("cadenza.restore").remember(session.id, append(vim.split(line, "\n", { plain = true }), "CadenzaMovement"))
end

local function tool_line(info)
  local line = ("  %s %s"):format(ICONS[info.status] or "·", info.title)
  if info.note then
    line = line .. " — " .. info.note
  end
  return line
end

local function set_tool_line(info)
  pb.rewrite(info.mark, tool_line(info), HL[info.status])
end

--- A new tool call: one line whose status icon changes with its updates.
---@param session table
---@param update table ACP tool_call
function M.tool_call(session, update)
  M.header(session)
  local info = {
    title = update.title or update.kind or "tool call",
    status = update.status or "pending",
  }
  local row = append({ tool_line(info) }, HL[info.status])
  info.mark = pb.mark(row)
  state.tools[session.id .. ":" .. tostring(update.toolCallId)] = info
end

local function first_text(content)
  for _, item in ipairs(content or {}) do
    if item.type == "content" and type(item.content) == "table" and item.content.text then
      return (item.content.text:gsub("\n.*", ""))
    end
  end
end

--- A tool call's update: its status, a failure's first line, diffs as summaries.
---@param session table
---@param update table ACP tool_call_update
function M.tool_update(session, update)
  M.header(session)
  local key = session.id .. ":" .. tostring(update.toolCallId)
  local info = state.tools[key]
  if not info then
    M.tool_call(session, { toolCallId = update.toolCallId, title = update.title, status = update.status })
    info = state.tools[key]
  end
  if update.status then
    info.status = update.status
    if update.status == "failed" then
      info.note = first_text(update.content)
    end
    set_tool_line(info)
  end
  for _, item in ipairs(update.content or {}) do
    if item.type == "diff" then
      local old, new = item.oldText, item.newText or ""
      local path = relative(item.path, session.root)
      if old == nil or old == vim.NIL then
        append({ ("      + created %s"):format(path) })
      else
        local removed, added = 0, 0
        for _, hunk in ipairs(compat.diff_hunks(old, new)) do
          removed = removed + hunk[2]
          added = added + hunk[4]
        end
        append({ ("      ~ %s: -%d +%d lines"):format(path, removed, added) })
      end
    end
  end
end

--- A movement of the workflow starts.
function M.movement(session, update)
  M.header(session)
  local line = ("  ▸ movement %s"):format(update.movement or "?")
  if update.reason and update.reason ~= "" then
    line = line .. " — " .. update.reason
  end
  append({ line }, "CadenzaMovement")
end

--- Older turns were summarized.
function M.compaction(session, update)
  M.header(session)
  append({
    ("  (context compacted: %s → %s tokens)"):format(
      tostring(update.tokensBefore),
      tostring(update.tokensAfter)
    ),
  }, "Comment")
end

local PLAN_BOX = { completed = "[x]" }

--- The agent's plan (ACP: entries with content and status): a checklist, written again as
--- steps finish. `[x]` done, `[ ]` to do (the step in progress says so).
function M.plan(session, update)
  M.header(session)
  local entries = update.entries or {}
  local done = 0
  for _, entry in ipairs(entries) do
    done = done + (entry.status == "completed" and 1 or 0)
  end
  local lines = { ("  plan (%d of %d done):"):format(done, #entries) }
  for _, entry in ipairs(entries) do
    local now = entry.status == "in_progress" and "  (in progress)" or ""
    lines[#lines + 1] = ("    %s %s%s"):format(PLAN_BOX[entry.status] or "[ ]", entry.content or "", now)
  end
  append(lines, "Comment")
end

--- A run stopped: the session is over, or it waits for the person (`session.state` is
--- "waiting": needs_user_input, waiting_human).
---@param session table
---@param update table session_end
---@param unsaved string[] files the session edited that are modified and unsaved
function M.session_end(session, update, unsaved)
  M.header(session)
  local steps = tonumber(update.steps)
  local waiting = session.state == "waiting"
  local lines = {
    ("%s %s%s%s"):format(
      waiting and "⏸" or "■",
      update.stopReason or "ended",
      steps and ((" after %d step%s"):format(steps, steps == 1 and "" or "s")) or "",
      (session.usage_text and session.usage_text ~= "") and (" · " .. session.usage_text) or ""
    ),
  }
  local message = update.message
  -- The final answer was streamed as agent text just before: not written a second time.
  local streamed = state.writer == session.id and vim.trim(state.streamed) or ""
  if type(message) == "string" and streamed ~= "" and vim.trim(message) == streamed then
    message = nil
  end
  if type(message) == "string" and message ~= "" then
    for _, line in ipairs(vim.split(message, "\n", { plain = true })) do
      lines[#lines + 1] = "  " .. line
    end
  end
  if type(update.missingInfo) == "string" then
    lines[#lines + 1] = "  missing: " .. update.missingInfo
  end
  if type(update.whyNoDefault) == "string" then
    lines[#lines + 1] = "  why no default: " .. update.whyNoDefault
  end
  if type(update.url) == "string" and update.url ~= "" then
    lines[#lines + 1] = "  page: " .. update.url
  end
  if unsaved and #unsaved > 0 then
    local names = {}
    for _, path in ipairs(unsaved) do
      names[#names + 1] = relative(path, session.root)
    end
    lines[#lines + 1] = ("  unsaved: %s (:wall writes them, u undoes)"):format(table.concat(names, ", "))
  end
  if waiting and not session.replaying then
    lines[#lines + 1] = update.stopReason == "waiting_human"
        and "  waiting for you: :CadenzaReply when done in the browser, :CadenzaCancel stops"
      or "  waiting for your answer: :CadenzaReply {answer}, :CadenzaCancel stops"
  end
  append(lines, waiting and "CadenzaWaiting" or "CadenzaEnd")
end

--- A plain note line (e.g. the server exited).
function M.note(session, text)
  M.header(session)
  append({ "  " .. text }, "Comment")
end

return M
