-- Code intelligence for a file Neovim has no language server for: report.py is open, but no
-- LSP client other than Cadenza's is attached to it (nothing is configured for Python). The
-- plugin declares code intelligence and answers "not available" (intel.lua), so the server
-- asks the Python language server it starts itself (ty); the rename still comes back as
-- workspace/applyEdit into the buffers, like any edit.
local T = require("cadenza_test")

local RENAMED = {
  ["inventory.py"] = "def compute_total(items):\n    return sum(itemz)", -- then broken by edit_file
  ["report.py"] = "from inventory import compute_total\n\n\ndef main():\n    print(compute_total([1, 2]))",
}

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  vim.cmd("edit report.py")
  local buf = vim.api.nvim_get_current_buf()

  vim.cmd("CadenzaRun Rename calc_total to compute_total")
  local session = T.wait_end(T.wait_session(60000), 120000)
  T.eq(session.stop_reason, "end_turn", "stop reason")

  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
    T.eq(client.name, require("cadenza.config").name, "the only client attached to report.py")
  end
  for name, expected in pairs(RENAMED) do
    local b = vim.fn.bufnr(vim.fn.fnamemodify(name, ":p"))
    T.truthy(b ~= -1 and vim.api.nvim_buf_is_loaded(b), name .. " is loaded")
    T.eq(T.text(b), expected, name .. " in its buffer")
  end
  vim.cmd("wall")
end)
