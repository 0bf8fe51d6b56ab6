-- :CadenzaModel between two turns of a chat: the picker lists the server's models (the
-- current one marked), the choice switches the session (cadenza.configureSession), and the
-- next turn goes to the new model.
local T = require("cadenza_test")

local api = vim.api

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
  vim.ui.input = function(opts, on_confirm)
    -- Only a server without cadenza.listModels asks for the name.
    shown = { "asked: " .. opts.prompt }
    on_confirm(target)
  end
  vim.cmd("CadenzaModel")
  T.wait(10000, function()
    return T.note(target .. " for the next message") ~= nil
  end, "the switch to be confirmed")
  T.say("picker: %s", vim.inspect(shown))
  T.eq(session.model, target, "the session's model after the switch")
  T.eq(require("cadenza.config").options.model, target, "new sessions use it too")

  require("cadenza.chat").send("And again")
  T.wait(20000, function()
    return ends >= 2
  end, "turn 2 to end")
end)
