-- Work-done progress of Cadenza sessions ($/progress → the LspProgress autocmd): vim.notify on
-- begin and end, and the latest message for statuslines (require("cadenza").status()).
local config = require("cadenza.config")

local M = {}

---@type table<string, {message: string, order: integer}>
local active = {}
local counter = 0
local group = nil

--- vim.notify outside the LspProgress autocommand (scheduled): an ERROR-level message from
--- inside it made Neovim print "Error detected while processing LspProgress Autocommands" and
--- wait for Enter. One line, cut to the screen's width, so no hit-enter prompt either.
local function notify(message, level)
  if not config.options.notify_progress then
    return
  end
  local line = ("Cadenza: " .. message):gsub("%s*\n.*", " …")
  local width = math.max(vim.v.echospace > 0 and vim.v.echospace or (vim.o.columns - 12), 40)
  if vim.fn.strdisplaywidth(line) > width then
    line = vim.fn.strcharpart(line, 0, width - 1) .. "…"
  end
  vim.schedule(function()
    vim.notify(line, level or vim.log.levels.INFO, { title = "Cadenza" })
  end)
end

local KEY_VARIABLES = { openai = "OPENAI_API_KEY", anthropic = "ANTHROPIC_API_KEY", openrouter = "OPENROUTER_API_KEY" }

--- A provider failure ("error: openai: HTTP 401: {json}") as one short line with the fix (it
--- must fit the command line: a longer message asks for Enter); other messages as they are.
---@param message string
---@return string
function M.readable(message)
  local provider = message:match("^error: ([%w_.-]+)[/: ]") or "the provider"
  local status = tonumber(message:match("HTTP (%d%d%d)"))
  if status == 401 or status == 403 then
    local variable = KEY_VARIABLES[provider] or "its API key"
    return ("error: %s refused the API key (HTTP %d): set %s"):format(provider, status, variable)
  elseif status == 404 then
    return ("error: %s does not know the model (HTTP 404): pick another one with :CadenzaModel"):format(provider)
  elseif status == 429 then
    return ("error: %s is rate-limiting (HTTP 429): wait, then send your message again"):format(provider)
  elseif message:match("Connection refused") or message:match("ConnectError") then
    return "error: the model server is unreachable: start it, or fix its base URL"
  end
  return message
end

local function end_level(message)
  if message:match("^error") or message:match("^failed") or message:match("^aborted") then
    return vim.log.levels.ERROR
  end
  if message:match("^cancelled") or message:match("^max_steps") then
    return vim.log.levels.WARN
  end
  return vim.log.levels.INFO
end

--- LspProgress callback (ev.data = {client_id, params = {token, value}}).
function M.on_progress(ev)
  local data = ev.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  if not client or client.name ~= config.name then
    return
  end
  local params = data.params or {}
  local value = params.value
  if type(value) ~= "table" then
    return
  end
  local key = ("%d:%s"):format(data.client_id, tostring(params.token))
  local message = type(value.message) == "string" and value.message or ""
  if value.kind ~= "end" then
    message = message:gsub("\n.*", " …") -- a task with context: its first line
  end
  if value.kind == "begin" then
    counter = counter + 1
    active[key] = { message = message ~= "" and message or (value.title or "working"), order = counter }
    notify("started: " .. active[key].message)
  elseif value.kind == "report" then
    if active[key] and message ~= "" then
      active[key].message = message
    end
  elseif value.kind == "end" then
    active[key] = nil
    notify(message ~= "" and M.readable(message) or "done", end_level(message))
  end
  pcall(vim.cmd.redrawstatus)
end

--- Listen to LspProgress (once).
function M.setup()
  if group then
    return
  end
  group = vim.api.nvim_create_augroup("cadenza.progress", { clear = true })
  vim.api.nvim_create_autocmd("LspProgress", { group = group, callback = M.on_progress })
end

--- Forget the progress of a client whose server exited.
---@param client_id integer
function M.client_exited(client_id)
  local prefix = tostring(client_id) .. ":"
  for key in pairs(active) do
    if key:sub(1, #prefix) == prefix then
      active[key] = nil
    end
  end
end

--- "Cadenza: <latest message>" while a session runs, else "" (for statuslines).
---@return string
function M.status()
  local latest, count = nil, 0
  for _, entry in pairs(active) do
    count = count + 1
    if not latest or entry.order > latest.order then
      latest = entry
    end
  end
  if not latest then
    return ""
  end
  local prefix = count > 1 and ("Cadenza (%d)"):format(count) or "Cadenza"
  return ("%s: %s"):format(prefix, latest.message)
end

return M
