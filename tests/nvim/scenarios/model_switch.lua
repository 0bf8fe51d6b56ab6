-- :CadenzaModel between two turns of a chat: the picker lists the server's models (the
-- current one marked), the choice switches the session (cadenza.configureSession), and the
-- next turn goes to the new model.
local T = require("cadenza_test")

local api = vim.api

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup({ init_options = { models = { "openai/other" } } })
  local ends = 0
  api.nvim_create_autocmd("User", {
    pattern = "CadenzaSessionEnd",
    callback = function()
      ends = ends + 1
    end,
  })
  local target = T.env("CADENZA_TEST_OTHER_MODEL")

  vim.cmd("CadenzaChat Say hello")
  T.wait(20000, function()
    return ends >= 1
  end, "turn 1 to end")
  local session = require("cadenza.chat").session()
  T.eq(session.model, "openai/test", "turn 1's model")

  local shown
  vim.ui.select = function(items, opts, on_choice)
    T.eq(opts.kind, "cadenza.model", "the picker kind")
    shown = vim.tbl_map(opts.format_item, items)
    for _, item in ipairs(items) do
      if item.id == target then
        on_choice(item)
        return
      end
    end
    error("the picker does not offer " .. target .. ": " .. vim.inspect(shown), 0)
  end
  vim.ui.input = function(opts)
    error("asked for a model name (" .. opts.prompt .. ") although the server lists its models", 0)
  end
  vim.cmd("CadenzaModel")
  T.wait(10000, function()
    return T.note(target .. " for the next message") ~= nil
  end, "the switch to be confirmed")
  T.eq({ shown[1], shown[2] }, { "test (openai, default) ← current", "other (openai)" }, "the picker's first lines")
  T.contains(shown, "smollm2-135m", "pinned local models are offered")
  T.eq(session.model, target, "the session's model after the switch")
  T.eq(require("cadenza.config").options.model, target, "new sessions use it too")

  -- :CadenzaWorkflow the same way: the workflows with their descriptions, the current marked.
  local workflows
  vim.ui.select = function(items, opts, on_choice)
    T.eq(opts.kind, "cadenza.workflow", "the workflow picker kind")
    workflows = vim.tbl_map(opts.format_item, items)
    for _, item in ipairs(items) do
      if item.name == "plan-implement-review" then
        on_choice(item)
      end
    end
  end
  vim.cmd("CadenzaWorkflow")
  T.wait(10000, function()
    return T.note("the plan-implement-review workflow for the next message") ~= nil
  end, "the workflow switch to be confirmed")
  T.truthy(vim.startswith(workflows[1], "default — "), "workflows come with their description: " .. workflows[1])
  T.truthy(workflows[1]:find("← current", 1, true), "the current workflow marked")
  vim.cmd("CadenzaWorkflow default")
  T.wait(10000, function()
    return T.note("the default workflow for the next message") ~= nil
  end, "the switch back by name")

  require("cadenza.chat").send("And again")
  T.wait(20000, function()
    return ends >= 2
  end, "turn 2 to end")
end)
