-- A local model that is not downloaded: the session ends with an error whose fix ("Pull
-- model") is offered with vim.ui.select; "Not now" downloads nothing.
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup({ model = "local/smollm2-135m" })
  local offered
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind == "cadenza.fix" then
      offered = { items = items, prompt = opts.prompt }
      on_choice("Not now")
    end
  end
  vim.cmd("CadenzaChat Say hello")
  local session = T.wait_end(T.wait_session(), 30000)
  T.eq(session.stop_reason, "error", "the stop reason")
  T.wait(5000, function()
    return offered ~= nil
  end, "the fix to be offered")
  T.eq(offered.items, { "Pull model", "Not now" }, "the choices")
  T.contains(offered.prompt, "smollm2-135m", "the prompt names the model")
  T.truthy(not T.note("downloading"), "nothing downloaded")
end)
