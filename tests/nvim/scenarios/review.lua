-- The review of a turn's changes: a two-hunk edit shows two pending hunks in the buffer; the
-- keep key keeps the first, the undo key undoes the second (the old text is back in the
-- buffer); the follow-up's turn then goes to the model, which hears what was undone.
local T = require("cadenza_test")

local api = vim.api

local function press(keys)
  api.nvim_feedkeys(vim.keycode(keys), "mx", false)
end

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
  local path = T.workspace .. "/app.py"
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  local before = T.text(buf)

  vim.cmd("CadenzaChat Rename the constants")
  T.wait(20000, function()
    return ends >= 1
  end, "turn 1 to end")
  local review = require("cadenza.review")
  T.wait(10000, function()
    return #review.summary() == 1
  end, "the review of the turn's changes")
  T.eq(review.summary()[1].count, 2, "two hunks to review")
  T.contains(
    require("cadenza.panel").lines(),
    "changes to review: app.py (2) — in the file, \\k keeps and \\u undoes the change under the cursor",
    "the review line in the Cadenza buffer"
  )
  T.truthy(T.text(buf):find("FIRST = 10", 1, true) and T.text(buf):find("LAST = 90", 1, true), "both edits applied")

  -- The hunks are drawn: signs and the old lines as virtual lines.
  local marks = api.nvim_buf_get_extmarks(buf, api.nvim_create_namespace("cadenza.review"), 0, -1, { details = true })
  local old_lines = {}
  for _, mark in ipairs(marks) do
    for _, virt in ipairs(mark[4].virt_lines or {}) do
      old_lines[#old_lines + 1] = virt[1][1]
    end
  end
  table.sort(old_lines)
  T.eq(old_lines, { "- a = 1", "- z = 9" }, "the replaced lines shown above the new ones")

  -- Keep the first hunk, undo the second, each with its key under the cursor.
  api.nvim_set_current_win(vim.fn.bufwinid(buf))
  api.nvim_win_set_cursor(0, { 5, 0 })
  press("[h")
  local first_row = api.nvim_win_get_cursor(0)[1]
  T.eq(api.nvim_get_current_line(), "FIRST = 10", "[h goes to the previous change")
  press("\\k")
  T.wait(10000, function()
    return review.summary()[1] and review.summary()[1].count == 1
  end, "the kept hunk to leave the review")
  press("]h")
  T.truthy(api.nvim_win_get_cursor(0)[1] > first_row, "]h goes to the second change")
  T.eq(api.nvim_get_current_line(), "LAST = 90", "the cursor on the second change")
  press("\\u")
  T.wait(10000, function()
    return #review.summary() == 0
  end, "the undone hunk to leave the review")
  T.eq(T.text(buf), before:gsub("a = 1", "FIRST = 10"), "the kept change stays, the undone one is back to the old text")
  local states = {}
  for _, hunk in ipairs(review.files()[1].hunks) do
    states[#states + 1] = hunk.state
  end
  T.eq(states, { "kept", "undone" }, "the hunks' states")
  T.eq(#api.nvim_buf_get_extmarks(buf, api.nvim_create_namespace("cadenza.review"), 0, -1, {}), 0, "nothing left drawn")
  T.eq(vim.fn.maparg("\\k", "n", false, true).buffer, nil, "the review keys are gone")

  require("cadenza.chat").send("Anything else?")
  T.wait(20000, function()
    return ends >= 2
  end, "turn 2 to end")
end)
