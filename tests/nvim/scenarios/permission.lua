-- A gated tool (run_command) asks first: cadenza/requestPermission through vim.ui.select,
-- "Allow once" picked, the command runs (test_nvim.py checks the marker file).
local T = require("cadenza_test")

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  local seen = {}
  vim.ui.select = function(items, opts, on_choice)
    seen[#seen + 1] = { prompt = opts.prompt, kind = opts.kind, names = vim.tbl_map(opts.format_item, items) }
    for _, item in ipairs(items) do
      if item.name == "Allow once" then
        on_choice(item)
        return
      end
    end
    on_choice(nil)
  end

  vim.cmd("CadenzaRun Make a marker file")
  local session = T.wait_end(T.wait_session())
  T.eq(session.stop_reason, "end_turn", "stop reason")
  T.eq(seen, {
    {
      prompt = "Cadenza wants to run `touch marker.txt`",
      kind = "cadenza.permission",
      names = { "Allow once", "Always allow `touch marker.txt` in this workspace", "Always allow", "Reject", "Always reject" },
    },
  }, "the permission prompt")
  T.truthy(vim.uv.fs_stat(T.workspace .. "/marker.txt"), "marker.txt exists")
  T.contains(require("cadenza.panel").lines(), "  ✓ running `touch marker.txt`", "the tool call in the Cadenza buffer")
  -- The command's change (marker.txt, created) is in the review like an edit's.
  T.wait(10000, function()
    return #require("cadenza.review").summary() == 1
  end, "the review lists the command's change")
  T.eq(require("cadenza.review").summary(), { { path = "marker.txt", count = 1 } }, "the review")
  T.contains(require("cadenza.panel").lines(), "changes to review: marker.txt (1)", "the review's note")
end)
