-- Cadenza for Neovim: an LLM coding agent behind `cadenza serve`, driven through vim.lsp.
-- The public API; each function loads the module that does the work when it is called.
local M = {}

--- Configure the plugin (optional: every option has a default; see :h cadenza-setup).
---@param opts? table
function M.setup(opts)
  require("cadenza.config").setup(opts)
  require("cadenza.commands").create()
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

return M
