-- The completion options and the handling of inline completion items, without a server.
local T = require("cadenza_test")

local api = vim.api

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  local config = require("cadenza.config")
  T.eq(config.options.completion.enabled, false, "off by default")
  T.eq(config.options.completion.keys, { accept = "<Tab>", dismiss = "<C-]>" }, "the default keys")

  local ok, err = pcall(require("cadenza").setup, { completion = { enabld = true } })
  T.truthy(not ok, "a misspelled completion option is an error")
  T.contains(tostring(err), "unknown option completion.enabld", "the error names it")
  ok, err = pcall(require("cadenza").setup, { completion = { keys = { accept = 1 } } })
  T.truthy(not ok, "a key that is not a string is an error")
  T.contains(tostring(err), "completion.keys.accept", "the error names the option")

  require("cadenza").setup({ completion = { enabled = true, keys = { dismiss = false } } })
  T.eq(config.options.completion.keys.accept, "<Tab>", "keys merge with the defaults")
  T.eq(#api.nvim_get_autocmds({ group = "cadenza.completion", event = "TextChangedI" }), 1, "on: typing asks")
  require("cadenza").setup({ completion = { enabled = false } })
  T.eq(#api.nvim_get_autocmds({ group = "cadenza.completion" }), 0, "off again: no autocommands")

  local completion = require("cadenza.completion")
  local buf = api.nvim_create_buf(true, false)
  api.nvim_buf_set_lines(buf, 0, -1, false, { "x = ré" })
  local function at(line, character)
    return { line = line, character = character }
  end
  -- The cursor after "ré": byte 7, UTF-16 6.
  T.eq(completion.item_text({ insertText = "sult" }, buf, 0, 7, "utf-16"), "sult", "no range: at the cursor")
  T.eq(
    completion.item_text({ insertText = "sult\n", range = { start = at(0, 6), ["end"] = at(0, 6) } }, buf, 0, 7, "utf-16"),
    "sult\n",
    "an empty range at the cursor (UTF-16 columns)"
  )
  T.eq(
    completion.item_text({ insertText = "résult", range = { start = at(0, 4), ["end"] = at(0, 6) } }, buf, 0, 7, "utf-16"),
    "sult",
    "a range that starts before the cursor: the typed part is not shown again"
  )
  T.eq(
    completion.item_text({ insertText = "other", range = { start = at(0, 4), ["end"] = at(0, 6) } }, buf, 0, 7, "utf-16"),
    nil,
    "a text that does not start with what is typed is not shown"
  )
  T.eq(
    completion.item_text({ insertText = { kind = "snippet", value = "sult" } }, buf, 0, 7, "utf-16"),
    "sult",
    "a snippet shows as its text"
  )
  T.eq(completion.item_text({ insertText = "" }, buf, 0, 7, "utf-16"), nil, "an empty text is nothing")
end)
