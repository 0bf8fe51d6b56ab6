-- "Always allow `make …` in this workspace" at the permission prompt, then a second session's
-- `make` runs unasked; :CadenzaPermissions lists the remembered rule and revokes it
-- (test_permissions.py checks the files and what the person's state keeps).
local T = require("cadenza_test")

T.run(function()
  T.capture_notify()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  local prompts, listed = {}, {}
  vim.ui.select = function(items, opts, on_choice)
    local names = vim.tbl_map(opts.format_item, items)
    if opts.kind == "cadenza.permission" then
      prompts[#prompts + 1] = names
      for _, item in ipairs(items) do
        if item.optionId == "allow_pattern" then
          on_choice(item)
          return
        end
      end
      on_choice(nil)
    elseif opts.kind == "cadenza.permissions" then
      listed[#listed + 1] = names
      on_choice(items[1])
    else
      error("unexpected picker " .. tostring(opts.kind), 0)
    end
  end

  vim.cmd("CadenzaRun Make a marker file")
  local first = T.wait_end(T.wait_session())
  T.eq(first.stop_reason, "end_turn", "the first session's stop reason")
  T.eq(prompts, {
    { "Allow once", "Always allow `make …` in this workspace (it runs this workspace's Makefile)", "Always allow", "Reject", "Always reject" },
  }, "the permission prompt offers the command's pattern")

  vim.cmd("CadenzaRun Make another marker")
  T.wait(15000, function()
    local latest = require("cadenza.session").latest()
    return latest ~= first and latest.state == "ended"
  end, "the second session to end")
  T.eq(#prompts, 1, "the second make ran without asking")

  vim.cmd("CadenzaPermissions")
  T.wait(10000, function()
    return T.note("revoked run_command:make *") ~= nil
  end, "the rule to be revoked")
  T.eq(listed, { { "allow run_command:make * · this workspace" } }, "the rules listed")

  vim.cmd("CadenzaPermissions")
  T.wait(10000, function()
    return T.note("no permission rules") ~= nil
  end, "the empty list to be said")
  T.eq(#listed, 1, "no picker for no rules")
end)
