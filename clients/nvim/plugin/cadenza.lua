-- Defines the :Cadenza* commands only; every module loads when a command first runs.
if vim.g.loaded_cadenza then
  return
end
vim.g.loaded_cadenza = true

if vim.fn.has("nvim-0.10") == 0 then
  vim.api.nvim_echo({ { "cadenza.nvim needs Neovim 0.10 or later", "WarningMsg" } }, true, {})
  return
end

require("cadenza.commands").create()
