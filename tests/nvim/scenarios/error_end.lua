-- A provider error ends the session (the fake model answers HTTP 401): the end is one clean
-- vim.notify at ERROR level with the fix, short enough for the command line, never "Error
-- detected while processing LspProgress Autocommands" (which came with a hit-enter prompt).
local T = require("cadenza_test")

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  vim.o.columns = 140 -- (headless: 80) the whole line fits; a longer one is cut to v:echospace
  -- The real vim.notify, recorded on the side: the message must come outside the autocommand.
  local notify = vim.notify
  local seen = {}
  vim.notify = function(msg, level, opts)
    seen[#seen + 1] = { msg = tostring(msg), level = level }
    T.say("notify[%s]: %s", tostring(level), tostring(msg))
    return notify(msg, level, opts)
  end
  vim.cmd("CadenzaRun Say hello")
  local session = T.wait_end(T.wait_session(), 30000)
  T.eq(session.stop_reason, "error", "stop reason")
  local ended
  T.wait(5000, function()
    for _, note in ipairs(seen) do
      if note.msg:find("^Cadenza: error:") then
        ended = note
        return true
      end
    end
    return false
  end, "the error end notified")
  T.eq(ended.level, vim.log.levels.ERROR, "the error end's level")
  T.eq(
    ended.msg,
    "Cadenza: error: openai refused the API key (HTTP 401): set OPENAI_API_KEY",
    "the error end, one readable line"
  )
  local messages = vim.api.nvim_exec2("messages", { output = true }).output
  T.say("--- :messages ---\n%s", messages)
  -- (Headless, the scenario itself runs as a command, so a scheduled message still shows
  -- "Error detected while processing command line"; in an editor it comes from the main loop.)
  T.truthy(not messages:find("LspProgress Autocommands", 1, true), "an LspProgress autocommand error in :messages")
  T.contains(messages, "Cadenza: error: openai refused the API key (HTTP 401): set OPENAI_API_KEY", "the error in :messages")
  T.contains(require("cadenza.panel").lines(), "■ error after", "the end in the Cadenza buffer")
end)
