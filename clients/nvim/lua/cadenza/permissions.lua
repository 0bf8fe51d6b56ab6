-- :CadenzaPermissions: the rules that answer permission prompts without asking
-- (cadenza.listPermissions), in vim.ui.select; choosing a rule remembered for the workspace
-- revokes it (cadenza.revokePermission). A rule of the person's own cadenza.toml
-- ([permissions] allow/deny) is changed in that file: the message says where.
local M = {}

local function notify(message, level)
  vim.notify("Cadenza: " .. message, level or vim.log.levels.INFO, { title = "Cadenza" })
end

--- One line of the picker: "allow run_command:pytest * · this workspace".
---@param rule table {rule, decision, source, revocable}
---@return string
function M.describe(rule)
  local where = rule.source == "user" and "your settings" or "this workspace"
  return ("%s %s · %s"):format(tostring(rule.decision), tostring(rule.rule), where)
end

local function revoke(client, root, rule)
  local argument = { rule = rule.rule, decision = rule.decision, rootUri = vim.uri_from_fname(root) }
  require("cadenza.client").execute(client, "cadenza.revokePermission", argument, function(err)
    if err then
      notify(("could not revoke %s: %s"):format(rule.rule, require("cadenza.errors").text(err)), vim.log.levels.ERROR)
      return
    end
    notify(("revoked %s; Cadenza asks again"):format(rule.rule))
  end)
end

local function pick(client, root, result)
  local rules = type(result.rules) == "table" and result.rules or {}
  if #rules == 0 then
    notify("no permission rules: commands and deletions ask each time")
    return
  end
  vim.ui.select(rules, {
    prompt = "Cadenza permissions (choose one to revoke)",
    kind = "cadenza.permissions",
    format_item = M.describe,
  }, function(chosen)
    if not chosen then
      return
    end
    if not chosen.revocable then
      notify(
        ("%s is in your own settings: remove it from [permissions] %s in %s"):format(
          chosen.rule,
          chosen.decision,
          tostring(result.userConfig)
        ),
        vim.log.levels.WARN
      )
      return
    end
    revoke(client, root, chosen)
  end)
end

--- :CadenzaPermissions: list the rules of the current buffer's workspace; revoke the one chosen.
function M.run()
  local client_mod = require("cadenza.client")
  local root = client_mod.root_for(0)
  client_mod.with_root(root, function(client)
    local argument = { rootUri = vim.uri_from_fname(root) }
    client_mod.execute(client, "cadenza.listPermissions", argument, function(err, result)
      if err then
        notify("could not list the permissions: " .. require("cadenza.errors").text(err), vim.log.levels.ERROR)
      elseif type(result) == "table" then
        pick(client, root, result)
      end
    end)
  end)
end

return M
