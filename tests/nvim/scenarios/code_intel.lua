-- Code intelligence from Neovim's own language servers: ty (Cadenza's default Python language
-- server, installed with it) attached to the Python buffers with vim.lsp.config / vim.lsp.enable,
-- as a person configures it. The scripted model calls rename_symbol, find_references,
-- go_to_definition and diagnostics; the plugin answers the server's cadenza/rename,
-- cadenza/references, cadenza/definition and cadenza/diagnostics from ty (intel.lua).
local T = require("cadenza_test")

local RENAMED = {
  ["total.py"] = "def compute_total(items):\n    return sum(items)",
  ["report.py"] = "from total import compute_total\n\nprint(compute_total([1, 2]))",
  ["shop.py"] = 's = "é😀"; from total import compute_total\n\nPRICE = compute_total([3])',
}

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  vim.lsp.config("ty", {
    cmd = { T.env("CADENZA_TEST_TY"), "server" },
    filetypes = { "python" },
    root_markers = { ".git" },
  })
  vim.lsp.enable("ty")
  vim.cmd("edit total.py")
  local buf = vim.api.nvim_get_current_buf()
  T.wait(30000, function()
    return #vim.lsp.get_clients({ bufnr = buf, name = "ty" }) > 0
  end, "ty to attach to total.py")

  vim.cmd("CadenzaRun Rename calc_total to compute_total")
  local session = T.wait_end(T.wait_session(60000), 120000)
  T.eq(session.stop_reason, "end_turn", "stop reason")

  -- The rename came back as workspace/applyEdit: every file's buffer holds the new name.
  for name, expected in pairs(RENAMED) do
    local b = vim.fn.bufnr(vim.fn.fnamemodify(name, ":p"))
    T.truthy(b ~= -1 and vim.api.nvim_buf_is_loaded(b), name .. " is loaded")
    T.eq(T.text(b), expected, name .. " in its buffer")
  end
  vim.cmd("wall")
end)
