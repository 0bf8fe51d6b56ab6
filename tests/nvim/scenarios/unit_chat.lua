-- Lua unit tests of the chat's pieces, no server: mention parsing and completion, the
-- review's drawing and keys from a listChanges result, error wording, the model picker's lines.
local T = require("cadenza_test")

local api = vim.api

local function mentions_resolve()
  local mentions = require("cadenza.mentions")
  local root = vim.uv.fs_realpath(T.workspace)
  vim.fn.mkdir(root .. "/pkg", "p")
  vim.fn.writefile({ "x = 1" }, root .. "/pkg/mod.py")
  vim.fn.writefile({ "y = 2" }, root .. "/b.py")
  vim.cmd.edit(vim.fn.fnameescape(root .. "/b.py"))
  local origin = api.nvim_get_current_buf()
  local uris, names = mentions.resolve(
    "see @pkg/mod.py, and @buffer. Not @missing.py nor me@home nor @pkg/mod.py again",
    root,
    origin
  )
  T.eq(names, { "pkg/mod.py", "b.py" }, "mentioned files, once each, in order")
  T.eq(uris, { vim.uri_from_fname(root .. "/pkg/mod.py"), vim.uri_from_fname(root .. "/b.py") }, "their URIs")
  local _, none = mentions.resolve("@buffer", root, nil)
  T.eq(none, {}, "@buffer without a buffer of origin mentions nothing")

  T.eq(mentions.start_of("look at @pk", 11), 8, "completion starts at the @")
  T.eq(mentions.start_of("/exp", 4), 0, "a leading / completes a command")
  T.eq(mentions.start_of("a/b", 3), -3, "a / inside text does not")
  local commands = {
    { name = "explain", description = "Explain the code", hint = "what to explain" },
    { name = "plan-implement-review", description = "Plan, then implement, then review" },
  }
  local items = mentions.items("/ex", { root = root, commands = commands })
  T.eq(#items, 1, "one command matches /ex")
  T.eq(items[1].word, "/explain ", "the command's completion")
  T.eq(items[1].menu, "what to explain", "its hint")
  local words = vim.tbl_map(function(item)
    return item.word
  end, mentions.items("@mod", { root = root, origin = origin }))
  T.eq(words, { "@pkg/mod.py" }, "files match anywhere in their path")
end

local function review_draws_and_maps()
  local review = require("cadenza.review")
  local root = vim.uv.fs_realpath(T.workspace)
  local path = root .. "/r.py"
  vim.fn.writefile({ "one", "TWO", "three", "four" }, path)
  vim.cmd.edit(vim.fn.fnameescape(path))
  local buf = api.nvim_get_current_buf()
  local function range(l1, c1, l2, c2)
    return { start = { line = l1, character = c1 }, ["end"] = { line = l2, character = c2 } }
  end
  local files = {
    {
      uri = vim.uri_from_fname(path),
      path = "r.py",
      hunks = {
        { id = "h1", range = range(1, 0, 2, 0), oldText = "two\n", newText = "TWO\n", state = "pending" },
        { id = "h2", range = range(3, 0, 3, 0), oldText = "gone\n", newText = "", state = "pending" },
        { id = "h3", range = range(0, 0, 1, 0), oldText = "", newText = "one\n", state = "kept" },
        -- The person changed the file at this one since: no range, nothing to draw or undo.
        { id = "h4", oldText = "x\n", newText = "y\n", state = "pending" },
      },
    },
  }
  T.eq({ review.rows(files[1].hunks[1]) }, { 1, 1 }, "a one-line hunk's rows")
  T.eq({ review.rows(files[1].hunks[2]) }, { 3, 2 }, "a deletion covers no row")
  review.render(files)
  local ns = api.nvim_create_namespace("cadenza.review")
  local marks = api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })
  local virt, lines = {}, {}
  for _, mark in ipairs(marks) do
    for _, v in ipairs(mark[4].virt_lines or {}) do
      virt[#virt + 1] = v[1][1]
    end
    if mark[4].line_hl_group then
      lines[#lines + 1] = mark[2]
    end
  end
  table.sort(virt)
  T.eq(virt, { "- gone", "- two" }, "old lines of pending hunks only")
  T.eq(lines, { 1 }, "the new line highlighted")
  T.eq(vim.fn.maparg("<LocalLeader>k", "n", false, true).buffer, 1, "the keep key is buffer-local")
  T.eq(review.key_name("<LocalLeader>k"), "\\k", "the key as the person types it")
  vim.g.maplocalleader = ","
  T.eq(review.key_name("<localleader>U"), ",U", "with their maplocalleader")
  vim.g.maplocalleader = nil
  review.render({})
  T.eq(#api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}), 0, "an empty review draws nothing")
  T.eq(vim.fn.maparg("<LocalLeader>k", "n", false, true).buffer, nil, "and unmaps the keys")
end

local function wording()
  local errors = require("cadenza.errors")
  T.eq(
    errors.text({ code = -32602, message = "Invalid Params: cadenza.configureSession: unknown workflow 'x'" }),
    "unknown workflow 'x'",
    "protocol prefixes are dropped"
  )
  T.eq(errors.text({ code = -32803 }), "the server gave no reason", "an error without a message")
  local models = require("cadenza.models")
  T.eq(
    models.describe({ id = "local/qwen", label = "Qwen 1.5B", ["local"] = true, pulled = false }, "openai/x"),
    "Qwen 1.5B · not downloaded yet",
    "a local model not pulled"
  )
  T.eq(models.describe({ id = "openai/x", pulled = vim.NIL }, "openai/x"), "openai/x ← current", "the current model, without a label")
  local msg = require("cadenza.commands").unsupported_message("undo", "cadenza.undoSession", { code = -32601, message = "x" })
  T.eq(msg, "this Cadenza server is too old for undo: update it (git pull in your Cadenza checkout, then install it again)", "an old server")
end

local function usage_cost()
  local usage = require("cadenza.usage")
  local u = usage.new()
  usage.add_reply(u, { promptTokens = 1800, completionTokens = 20, cost = { amount = 0.006, currency = "USD" } })
  usage.add_reply(u, { promptTokens = 1843, completionTokens = 21, cost = { amount = 0.00634, currency = "USD" } })
  usage.add_update(u, { used = 1843, size = 8192 })
  T.eq(usage.short(u), "ctx 1,843/8,192 · 41 out · $0.0123", "the statusline's usage with the cost")
  T.contains(usage.format(u), "$0.0123 · 2 requests", "the end line's usage with the turn's cost")
  usage.add_update(u, { cost = { amount = 2.5, currency = "EUR" } })
  T.eq(usage.money(u.cost), "2.50 EUR", "another currency")
  usage.add_update(u, { cost = { amount = "lots" } })
  T.eq(usage.money(u.cost), "2.50 EUR", "a malformed cost is ignored")
end

local function setup_validates_review_keys()
  local ok, err = pcall(require("cadenza").setup, { review = { keys = { keep = 1 } } })
  T.eq(ok, false, "a bad key is refused")
  T.contains(err, "review.keys.keep", "the option named")
  ok, err = pcall(require("cadenza").setup, { review = { nope = true } })
  T.eq(ok, false, "an unknown review option is refused")
  T.contains(err, "review.nope", "the unknown option named")
  require("cadenza").setup({ review = { keys = { next = false } } })
  T.eq(require("cadenza.config").options.review.keys.keep, "<LocalLeader>k", "other keys keep their default")
  require("cadenza").setup({})
end

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  mentions_resolve()
  review_draws_and_maps()
  wording()
  usage_cost()
  setup_validates_review_keys()
end)
