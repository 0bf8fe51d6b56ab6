-- :CadenzaModel and :CadenzaWorkflow: choose the model or the workflow of the chat's next turn
-- (cadenza.configureSession) and of new sessions (the `model` / `workflow` options), from the
-- server's lists (cadenza.listModels).
local M = {}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

--- One line of the picker: the server's label (else the id), whether a local model must be
--- downloaded first, and which is current.
---@param item table {id, label?, local?, pulled?}
---@param current string?
---@return string
function M.describe(item, current)
  local text = type(item.label) == "string" and item.label ~= "" and item.label or tostring(item.id)
  if item["local"] == true and item.pulled == false then
    text = text .. " · not downloaded yet"
  end
  if item.id == current then
    text = text .. " ← current"
  end
  return text
end

local function pull(client, model, after)
  notify(("downloading %s…"):format(model))
  require("cadenza.client").execute(client, "cadenza.pullModel", { model = model }, function(err)
    if err then
      notify(("could not download %s: %s"):format(model, require("cadenza.errors").text(err)), vim.log.levels.ERROR)
      return
    end
    notify(("%s is downloaded"):format(model))
    after()
  end)
end

--- A session ended with a fix the server offers (`fix: {title, command, arguments}`, e.g.
--- "Pull model" → cadenza.pullModel): ask whether to run it.
---@param session cadenza.Session
---@param fix table
---@param message string? the end's message
function M.offer_fix(session, fix, message)
  if type(fix.title) ~= "string" or type(fix.command) ~= "string" then
    return
  end
  local client = vim.lsp.get_client_by_id(session.client_id)
  if not client then
    return
  end
  local argument = type(fix.arguments) == "table" and fix.arguments[1] or vim.empty_dict()
  vim.schedule(function()
    vim.ui.select({ fix.title, "Not now" }, {
      prompt = type(message) == "string" and message ~= "" and message or fix.title,
      kind = "cadenza.fix",
    }, function(choice)
      if choice ~= fix.title then
        return
      end
      if fix.command == "cadenza.pullModel" and type(argument.model) == "string" then
        pull(client, argument.model, function()
          notify("send your message again to use it")
        end)
        return
      end
      require("cadenza.client").execute(client, fix.command, argument, function(err)
        if err then
          notify(("%s failed: %s"):format(fix.title, require("cadenza.errors").text(err)), vim.log.levels.ERROR)
        end
      end)
    end)
  end)
end

--- Use `model` from the next turn of the chat's conversation on, and for new sessions.
---@param model string "PROVIDER/MODEL"
---@param client table?
function M.choose(model, client)
  local config = require("cadenza.config")
  local session = require("cadenza.chat").session() or require("cadenza.session").latest()
  config.options.model = model
  if not session or not client then
    notify(("new sessions use %s"):format(model))
    return
  end
  local argument = { sessionId = session.id, model = model }
  require("cadenza.client").execute(client, "cadenza.configureSession", argument, function(err, result)
    if err then
      notify(("could not switch to %s: %s"):format(model, require("cadenza.errors").text(err)), vim.log.levels.ERROR)
      return
    end
    session.model = type(result) == "table" and result.model or model
    local when = session.state == "running" and "from the next turn on" or "for the next message"
    notify(("%s %s"):format(session.model, when))
  end)
end

local function pick(client, result)
  local items = type(result.models) == "table" and result.models or {}
  local current = type(result.current) == "table" and result.current.model or nil
  if #items == 0 then
    notify("the server offers no models", vim.log.levels.WARN)
    return
  end
  vim.ui.select(items, {
    prompt = "Cadenza model",
    kind = "cadenza.model",
    format_item = function(item)
      return M.describe(item, current)
    end,
  }, function(chosen)
    if not chosen then
      return
    end
    if chosen["local"] == true and chosen.pulled == false then
      pull(client, chosen.id, function()
        M.choose(chosen.id, client)
      end)
    else
      M.choose(chosen.id, client)
    end
  end)
end

--- Use `workflow` from the next turn of the chat's conversation on, and for new sessions.
---@param workflow string
---@param client table?
function M.choose_workflow(workflow, client)
  local session = require("cadenza.chat").session() or require("cadenza.session").latest()
  require("cadenza.config").options.workflow = workflow
  if not session or not client then
    notify(("new sessions use the %s workflow"):format(workflow))
    return
  end
  local argument = { sessionId = session.id, workflow = workflow }
  require("cadenza.client").execute(client, "cadenza.configureSession", argument, function(err, result)
    if err then
      notify(("could not switch to %s: %s"):format(workflow, require("cadenza.errors").text(err)), vim.log.levels.ERROR)
      return
    end
    session.workflow = type(result) == "table" and result.workflow or workflow
    notify(("the %s workflow for the next message"):format(session.workflow))
  end)
end

local function pick_workflow(client, result)
  local items = type(result.workflows) == "table" and result.workflows or {}
  local current = type(result.current) == "table" and result.current.workflow or nil
  vim.ui.select(items, {
    prompt = "Cadenza workflow",
    kind = "cadenza.workflow",
    format_item = function(item)
      local text = tostring(item.name)
      if type(item.description) == "string" and item.description ~= "" then
        text = text .. " — " .. item.description
      end
      return item.name == current and (text .. " ← current") or text
    end,
  }, function(chosen)
    if chosen then
      M.choose_workflow(chosen.name, client)
    end
  end)
end

--- :CadenzaModel [model]: with a name, use it; else pick one from the server's list.
--- (`what` = "workflow": the same for :CadenzaWorkflow.)
---@param model? string
function M.run(model, what)
  local client_mod = require("cadenza.client")
  local session = require("cadenza.chat").session() or require("cadenza.session").latest()
  local root = session and session.root or client_mod.root_for(0)
  client_mod.with_root(root, function(client)
    if model and vim.trim(model) ~= "" then
      (what == "workflow" and M.choose_workflow or M.choose)(vim.trim(model), client)
      return
    end
    local argument = { rootUri = vim.uri_from_fname(root) }
    if session and session.client_id == client.id then
      argument.sessionId = session.id -- `current` is then what its next turn uses
    end
    client_mod.execute(client, "cadenza.listModels", argument, function(err, result)
      if err and what == "workflow" then
        notify("could not list the workflows: " .. require("cadenza.errors").text(err), vim.log.levels.ERROR)
      elseif err and client_mod.is_unsupported(client, "cadenza.listModels", err) then
        vim.ui.input({ prompt = "Model (provider/model, e.g. openai/gpt-4.1): " }, function(input)
          if input and vim.trim(input) ~= "" then
            M.choose(vim.trim(input), client)
          end
        end)
      elseif err then
        notify("could not list the models: " .. require("cadenza.errors").text(err), vim.log.levels.ERROR)
      elseif type(result) == "table" then
        (what == "workflow" and pick_workflow or pick)(client, result)
      end
    end)
  end)
end

return M
