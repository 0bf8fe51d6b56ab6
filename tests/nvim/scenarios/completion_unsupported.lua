-- Inline completions on by default, against a server whose model cannot fill in the middle
-- (a hosted provider: the fake OpenAI server): typing asks, every answer is empty, nothing is
-- shown and nothing pops up; the plugin's log says why once, however long one types.
local T = require("cadenza_test")

local api = vim.api
local completion = require("cadenza.completion")
local log = require("cadenza.log")

local asked, answered = 0, 0
local request, compat = completion.request, require("cadenza.compat")
completion.request = function(...)
  asked = asked + 1
  return request(...)
end
local compat_request = compat.request
compat.request = function(client, method, params, handler, bufnr)
  if method ~= "textDocument/inlineCompletion" then
    return compat_request(client, method, params, handler, bufnr)
  end
  return compat_request(client, method, params, function(err, ...)
    if not err then -- not a cancelled one
      answered = answered + 1
    end
    return handler(err, ...)
  end, bufnr)
end

-- Four minutes: the server starts slowly on loaded cores.
local deadline = vim.uv.now() + 240000

local function later(cond, then_do)
  if cond() or vim.uv.now() > deadline then
    then_do()
  else
    vim.defer_fn(function()
      later(cond, then_do)
    end, 20)
  end
end

local function type_slowly(text, then_do)
  local keys = vim.split(text, "")
  local function step(i)
    if i > #keys then
      return then_do()
    end
    api.nvim_feedkeys(keys[i], "t", false)
    vim.defer_fn(function()
      step(i + 1)
    end, 20)
  end
  step(1)
end

local function log_lines(needle)
  return vim.tbl_filter(function(line)
    return line:find(needle, 1, true) ~= nil
  end, log.lines())
end

T.capture_notify()
vim.cmd("runtime plugin/cadenza.lua")
T.setup() -- no completion option: on by default

local buf
local seen = {}

-- Type, pause until the request is answered, three times.
local function burst(n, then_do)
  if n == 0 then
    return then_do()
  end
  local before = answered
  type_slowly("x = 1\n", function()
    later(function()
      return answered > before and not completion.in_flight(buf)
    end, function()
      seen.ghosts = (seen.ghosts or 0) + (completion.ghost_text(buf) and 1 or 0)
      burst(n - 1, then_do)
    end)
  end)
end

vim.defer_fn(function()
  vim.cmd.edit(vim.fn.fnameescape(T.workspace .. "/notes.py"))
  buf = api.nvim_get_current_buf()
  api.nvim_feedkeys("o", "t", false) -- insert mode starts the server
  burst(3, function()
    T.run(function()
      T.eq(#api.nvim_get_autocmds({ group = "cadenza.completion", event = "TextChangedI" }), 1, "on by default")
      T.truthy(answered >= 3, ("typing asked and was answered (asked %d, answered %d)"):format(asked, answered))
      T.eq(seen.ghosts, 0, "no ghost text")
      T.eq(T.notes, {}, "nothing popped up")
      local off = log_lines("inline completions are off")
      T.eq(#off, 1, "why completions are off is in the log once")
      T.contains(off[1], "openai/test cannot fill in the middle", "the reason")
      T.eq(log_lines("inline completion failed"), {}, "no request failed")
      T.eq(#log_lines("could not start"), 0, "the server started")
    end)
  end)
end, 50)
