-- :checkhealth cadenza reports Neovim, the server command and its version, the model and
-- provider; with a missing server command it says what is missing.
local T = require("cadenza_test")

local function health()
  vim.cmd("checkhealth cadenza")
  local text = T.text(0)
  vim.cmd("bwipeout!")
  return text
end

T.run(function()
  vim.cmd("runtime plugin/cadenza.lua")
  T.setup()
  local v = vim.version()
  local good = health()
  T.say("%s", good)
  T.contains(good, ("OK Neovim %d.%d.%d"):format(v.major, v.minor, v.patch), "the Neovim version")
  T.contains(good, "OK server command: " .. table.concat(vim.json.decode(T.env("CADENZA_TEST_SERVER_CMD")), " "), "the server command")
  T.contains(good, "OK server version: cadenza ", "the server's version")
  T.contains(good, "OK model: openai/test (provider openai, from setup())", "the model")
  T.contains(good, "OPENAI_BASE_URL: http://127.0.0.1:", "the provider's endpoint")
  T.contains(good, "OK OPENAI_API_KEY is set", "the provider's key")
  T.contains(good, "no server running", "no server yet")

  require("cadenza").setup({ cmd = { "cadenza-not-installed", "serve" }, model = "local/smollm2-135m" })
  local bad = health()
  T.say("%s", bad)
  T.contains(bad, "ERROR server command not found: cadenza-not-installed (configured)", "the missing command")
  T.contains(bad, "from a checkout of its repository", "the advice")
  T.contains(bad, "python3 -m pip install /path/to/cadenza", "the advice's command")
  T.contains(bad, "OK model: local/smollm2-135m (provider local, from setup())", "the local model")
  T.contains(bad, "cadenza models pull smollm2-135m", "how to pull it")
end)
