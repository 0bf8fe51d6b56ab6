-- A command that wrote a binary file: the review cannot list it, and the Cadenza buffer says
-- which file and why (the server's listChanges `unlisted` sentence).
local T = require("cadenza_test")

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  vim.ui.select = function(items, _, on_choice)
    for _, item in ipairs(items) do
      if item.name == "Allow once" then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  vim.cmd("CadenzaRun Write the data file")
  local session = T.wait_end(T.wait_session())
  T.eq(session.stop_reason, "end_turn", "stop reason")
  T.wait(10000, function()
    return table.concat(require("cadenza.panel").lines(), "\n"):find("Not listed for review", 1, true) ~= nil
  end, "the note on what the review cannot list")
  T.contains(
    require("cadenza.panel").lines(),
    "changed that is not text, over 1 MB or a link (data.bin).",
    "the note names the file and why"
  )
end)
