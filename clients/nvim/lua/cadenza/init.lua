-- Cadenza for Neovim: an LLM coding agent behind `cadenza serve`, driven through vim.lsp.
-- The public API; each function loads the module that does the work when it is called.
local M = {}

--- Configure the plugin (optional: every option has a default; see :h cadenza-setup).
---@param opts? table
function M.setup(opts)
  require("cadenza.config").setup(opts)
  require("cadenza.commands").create()
  -- Loaded only when on (or to turn it off again).
  if require("cadenza.config").options.completion.enabled or package.loaded["cadenza.completion"] then
    require("cadenza.completion").setup()
  end
end

--- Run an agent task (see :h :CadenzaRun).
---@param task? string
---@param opts? {range?: integer, line1?: integer, line2?: integer, bufnr?: integer}
function M.run(task, opts)
  require("cadenza.commands").run(task, opts)
end

--- Cancel a session (default: the newest running or waiting one).
---@param session_id? string
function M.cancel(session_id)
  require("cadenza.commands").cancel(session_id)
end

--- Answer a session that waits for the person (see :h :CadenzaReply).
---@param text? string nil or "": vim.ui.input asks
---@param session_id? string default: the newest waiting session
function M.reply(text, session_id)
  require("cadenza.commands").reply(text, session_id)
end

--- Undo a session's changes through the server (default: the newest session).
---@param session_id? string
function M.undo(session_id)
  require("cadenza.commands").undo(session_id)
end

--- Pick one of the server's sessions and replay it into the Cadenza buffer.
function M.sessions()
  require("cadenza.commands").sessions()
end

--- Open the chat (see :h :CadenzaChat); with `message`, send it.
---@param message? string
function M.chat(message)
  require("cadenza.chat").open()
  if message and message ~= "" then
    require("cadenza.chat").send(message)
  end
end

--- Choose the model of the next turn and of new sessions (see :h :CadenzaModel).
---@param name? string nil: pick from the server's list
function M.model(name)
  require("cadenza.models").run(name)
end

--- Choose the workflow of the next turn and of new sessions (see :h :CadenzaWorkflow).
---@param name? string nil: pick from the server's list
function M.workflow(name)
  require("cadenza.models").run(name, "workflow")
end

--- Open the Cadenza buffer.
---@param focus? boolean
function M.open(focus)
  require("cadenza.panel").open(focus)
end

--- The latest progress message while a session runs, else "" (for statuslines).
---@return string
function M.status()
  if not package.loaded["cadenza.progress"] then
    return ""
  end
  return require("cadenza.progress").status()
end

--- A statusline component: the latest progress message and the token usage of the newest
--- session's turn ("Cadenza: work · step 2/25 · ctx 1,843 · 41 out"); after it ended, its stop
--- reason and usage ("Cadenza: end_turn · ctx 1,843 · 41 out"); "" before any session.
--- E.g. `vim.o.statusline = "%f %m%=%{v:lua.require'cadenza'.statusline()} "`.
---@return string
function M.statusline()
  if not package.loaded["cadenza.session"] then
    return ""
  end
  local newest = require("cadenza.session").list()[1]
  if not newest then
    return ""
  end
  local usage = require("cadenza.usage")
  local size = (require("cadenza.config").options.init_options or {}).contextSize
  local counts = usage.short(newest.usage, type(size) == "number" and size or nil)
  local head
  if newest.state == "running" then
    head = M.status()
    if head == "" then
      head = "Cadenza: running"
    end
  else
    head = "Cadenza: " .. (newest.stop_reason or newest.state)
  end
  return counts ~= "" and (head .. " · " .. counts) or head
end

return M
