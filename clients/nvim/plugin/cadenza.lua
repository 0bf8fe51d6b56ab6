-- Defines the :Cadenza* commands, and sets inline completions up the first time insert mode
-- starts (on by default, setup() or no setup()); every other module loads when a command first
-- runs.
if vim.g.loaded_cadenza then
  return
end
vim.g.loaded_cadenza = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_echo({ { "cadenza.nvim needs Neovim 0.10 or later", "WarningMsg" } }, true, {})
  return
end

require("cadenza.commands").create()

vim.api.nvim_create_autocmd("InsertEnter", {
  group = vim.api.nvim_create_augroup("cadenza.start", { clear = true }),
  once = true,
  callback = function(ev)
    require("cadenza.completion").start_by_default(ev.buf)
  end,
})
