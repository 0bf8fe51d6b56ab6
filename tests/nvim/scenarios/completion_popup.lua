-- Typing in the chat's prompt as a person does: "@" opens the completion menu with the files,
-- "/" at the start with the server's commands. Keys typed through the event loop (the menu
-- opens from a TextChangedI autocommand), so the scenario polls with vim.defer_fn and asserts
-- at the end.
local T = require("cadenza_test")

local api = vim.api
local seen = {}

local function later(cond, then_do, deadline)
  deadline = deadline or (vim.uv.now() + 20000)
  if cond() or vim.uv.now() > deadline then
    then_do()
  else
    vim.defer_fn(function()
      later(cond, then_do, deadline)
    end, 50)
  end
end

-- TextChangedI fires once the typeahead is empty: the trigger key comes last, as when a
-- person types it; what follows it narrows the menu.
local function type_keys(keys, key)
  seen[key] = nil
  api.nvim_feedkeys(keys, "t", false)
end

vim.cmd("runtime plugin/cadenza.lua")
T.setup()
api.nvim_create_autocmd("CompleteChanged", {
  callback = function()
    local items = vim.fn.complete_info({ "items" }).items or {}
    local words = vim.tbl_map(function(item)
      return item.word
    end, items)
    seen[#words > 0 and words[1]:sub(1, 1) or "?"] = words
  end,
})
vim.cmd.edit(vim.fn.fnameescape(T.workspace .. "/app.py"))
vim.cmd("CadenzaChat")
local chat = require("cadenza.chat")
local input = chat.input_buf()

later(function()
  return #chat.commands() > 0
end, function()
  type_keys("iSee @", "@")
  later(function()
    return seen["@"] ~= nil
  end, function()
    api.nvim_feedkeys(vim.keycode("<C-e><Esc>"), "t", false)
    vim.defer_fn(function()
      api.nvim_buf_set_lines(input, 0, -1, false, { "" })
      api.nvim_win_set_cursor(0, { 1, 0 })
      type_keys("i/", "/")
      later(function()
        return seen["/"] ~= nil
      end, function()
        api.nvim_feedkeys(vim.keycode("<C-e><Esc>"), "t", false)
        T.run(function()
          T.truthy(#chat.commands() > 0, "the server's commands were listed")
          T.eq(api.nvim_get_current_buf(), input, "typing happened in the prompt")
          T.truthy(seen["@"], "typing @ opened the completion menu")
          T.truthy(vim.tbl_contains(seen["@"], "@app.py"), "the menu offers @app.py: " .. vim.inspect(seen["@"]))
          T.truthy(seen["/"], "typing / at the start opened the completion menu")
          T.truthy(vim.tbl_contains(seen["/"], "/explain "), "the menu offers /explain: " .. vim.inspect(seen["/"]))
        end)
      end)
    end, 100)
  end)
end)
