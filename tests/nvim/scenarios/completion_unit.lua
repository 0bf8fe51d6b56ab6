-- The completion options and the handling of inline completion items, without a server.
local T = require("cadenza_test")

local api = vim.api

--- Without setup(), the first InsertEnter sets completions up; with setup() turning them off
--- it does nothing.
local function on_without_setup()
  local completion = require("cadenza.completion")
  T.eq(#api.nvim_get_autocmds({ group = "cadenza.start", event = "InsertEnter" }), 1, "the plugin waits for insert mode")
  T.eq(pcall(api.nvim_get_autocmds, { group = "cadenza.completion" }), false, "nothing set up before it")
  local scratch = api.nvim_create_buf(false, true)
  api.nvim_exec_autocmds("InsertEnter", { buffer = scratch })
  T.eq(#api.nvim_get_autocmds({ group = "cadenza.start" }), 0, "once")
  T.eq(#api.nvim_get_autocmds({ group = "cadenza.completion", event = "TextChangedI" }), 1, "typing asks, without setup()")
  T.eq(require("cadenza.client").all(), {}, "a scratch buffer starts no server")
  require("cadenza").setup({ completion = { enabled = false } })
  T.eq(#api.nvim_get_autocmds({ group = "cadenza.completion" }), 0, "setup() turns them off")
  completion.start_by_default(scratch)
  T.eq(#api.nvim_get_autocmds({ group = "cadenza.completion" }), 0, "and they stay off")
  require("cadenza").setup()
end

--- A server that cannot start: typing does not start it again and again (one error message);
--- a command still tries.
local function no_server_no_spam()
  local notes = {}
  local notify = vim.notify
  vim.notify = function(msg)
    notes[#notes + 1] = msg
  end
  require("cadenza").setup({ cmd = { "cadenza-not-installed", "serve" } })
  local buf = api.nvim_create_buf(true, false)
  api.nvim_buf_set_name(buf, T.workspace .. "/typed.py")
  api.nvim_exec_autocmds("InsertEnter", { buffer = buf })
  T.contains(notes, "could not start `cadenza-not-installed serve`", "the error")
  local shown = #notes -- Neovim's own message about the command may come too
  for _ = 1, 3 do
    api.nvim_exec_autocmds("InsertEnter", { buffer = buf })
  end
  T.eq(#notes, shown, "entering insert mode again shows nothing more")
  require("cadenza.client").with_client(buf, function() end)
  T.eq(#notes, 2 * shown, "a command tries again")
  vim.notify = notify
  require("cadenza").setup()
end

--- Without ghost text, the accept key does what it did: a completion plugin's global mapping
--- of <Tab> still runs, an unmapped <Tab> inserts a tab. (Runs after no_server_no_spam: the
--- workspace's server is known not to start, so entering insert mode starts none.)
local function keys_fall_back()
  local tabs = 0
  vim.keymap.set("i", "<Tab>", function()
    tabs = tabs + 1
    return "[tab]"
  end, { expr = true })
  vim.cmd.edit(vim.fn.fnameescape(T.workspace .. "/mapped.py"))
  api.nvim_feedkeys(vim.keycode("ix<Tab>y<Esc>"), "xt", false)
  T.eq(tabs, 1, "the global <Tab> mapping ran")
  T.eq(api.nvim_get_current_line(), "x[tab]y", "and typed what it returns")
  T.eq(vim.fn.maparg("<Tab>", "i", false, true).buffer, 1, "<Tab> is the plugin's in the buffer")
  vim.keymap.del("i", "<Tab>")
  vim.cmd.edit(vim.fn.fnameescape(T.workspace .. "/plain.txt"))
  api.nvim_feedkeys(vim.keycode("ix<Tab>y<C-]><Esc>"), "xt", false)
  T.eq(api.nvim_get_current_line(), "x\ty", "an unmapped <Tab> inserts a tab, <C-]> does what it did")
end

--- Only a server that offers inline completions is asked.
local function offered()
  local completion = require("cadenza.completion")
  T.eq(completion.offered_by({ id = 901, server_capabilities = { inlineCompletionProvider = {} } }), true, "offered")
  T.eq(completion.offered_by({ id = 902, server_capabilities = {} }), false, "not in the capabilities")
  T.eq(completion.offered_by({ id = 903 }), false, "no capabilities")
end

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  local config = require("cadenza.config")
  T.eq(config.options.completion.enabled, true, "on by default")
  T.eq(config.options.completion.keys, { accept = "<Tab>", dismiss = "<C-]>" }, "the default keys")
  on_without_setup()
  no_server_no_spam()
  keys_fall_back()
  offered()

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
