-- :checkhealth cadenza: Neovim, the server command and its version, the model and provider,
-- the running servers, and what is missing.
local M = {}

local health = vim.health

local function check_neovim()
  health.start("cadenza: Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. ": Cadenza needs 0.10 or later", { "Upgrade Neovim" })
  end
  if type(vim.ui.open) == "function" then
    health.ok("vim.ui.open is available (pages for a person to visit open in the browser)")
  else
    health.warn("vim.ui.open is missing: pages cannot be opened for you")
  end
end

local function server_env()
  local env = vim.fn.environ()
  for key, value in pairs(require("cadenza.config").options.cmd_env or {}) do
    env[key] = tostring(value)
  end
  return env
end

local function check_version(cmd)
  local version_cmd = require("cadenza.config").version_cmd(cmd)
  local ok, result = pcall(function()
    return vim.system(version_cmd, { text = true, env = server_env() }):wait(15000)
  end)
  local shown = table.concat(version_cmd, " ")
  if not ok then
    health.error(("`%s` could not run: %s"):format(shown, tostring(result)))
    return
  end
  if result.code == 0 then
    health.ok(("server version: %s (`%s`)"):format(vim.trim(result.stdout or ""), shown))
  else
    local stderr = vim.trim(result.stderr or "")
    health.error(("`%s` failed (exit %d): %s"):format(shown, result.code, stderr:sub(-300)), {
      "Install the server from a checkout of the Cadenza repository: python3 -m pip install /path/to/cadenza (or set `cmd` in setup())",
    })
  end
end

local function check_server()
  local config = require("cadenza.config")
  health.start("cadenza: server")
  local cmd, source = config.server_cmd()
  local exe = vim.fn.exepath(cmd[1])
  if exe == "" then
    health.error(("server command not found: %s (%s)"):format(cmd[1], source), {
      "Install Cadenza from a checkout of its repository so that `cadenza` is on PATH (python3 -m pip install /path/to/cadenza)",
      'or set cmd = { "/path/to/python", "-P", "-m", "cadenza", "serve" } in setup()',
    })
    return
  end
  health.ok(("server command: %s (%s; %s)"):format(table.concat(cmd, " "), source, exe))
  check_version(cmd)
end

local PROVIDERS = { "local", "openai", "openai-envelope", "ollama" }

local function check_provider(provider, model)
  local env = server_env()
  if provider == "openai" or provider == "openai-envelope" then
    local base = env.OPENAI_BASE_URL
    health.info("OPENAI_BASE_URL: " .. (base or "not set (https://api.openai.com/v1)"))
    if (env.OPENAI_API_KEY or "") == "" then
      local loopback = base and (base:match("//127%.") or base:match("//localhost"))
      local report = loopback and health.info or health.warn
      report("OPENAI_API_KEY is not set in the server's environment")
    else
      health.ok("OPENAI_API_KEY is set")
    end
  elseif provider == "ollama" then
    health.info("OLLAMA_HOST: " .. (env.OLLAMA_HOST or "not set (127.0.0.1:11434)"))
  elseif provider == "local" then
    health.info(
      ("the embedded model runs in llama-server; `cadenza models pull %s` downloads it, `cadenza models list` shows what is pulled"):format(
        (model:gsub("^local/", ""))
      )
    )
  else
    health.info(("provider %s: not checked here (known to this check: %s)"):format(provider, table.concat(PROVIDERS, ", ")))
  end
end

local function check_model()
  local config = require("cadenza.config")
  health.start("cadenza: model")
  local model = config.model()
  local where = "setup()"
  if not model and vim.env.CADENZA_MODEL and vim.env.CADENZA_MODEL ~= "" then
    model, where = vim.env.CADENZA_MODEL, "CADENZA_MODEL"
  end
  if not model then
    health.info(
      "model: not set in setup() or CADENZA_MODEL; the server uses cadenza.toml, else the embedded local/qwen2.5-coder-1.5b"
    )
    check_provider("local", "local/qwen2.5-coder-1.5b")
  else
    local provider = model:match("^([^/]+)/") or "?"
    health.ok(("model: %s (provider %s, from %s)"):format(model, provider, where))
    check_provider(provider, model)
  end
  health.info("workflow: " .. (config.options.workflow or "the server's default"))
end

local function check_clients()
  health.start("cadenza: running servers")
  local clients = require("cadenza.client").all()
  if #clients == 0 then
    health.info("no server running (the first :CadenzaRun starts one for the buffer's root)")
    return
  end
  for _, client in ipairs(clients) do
    local info = client.server_info or {}
    health.ok(
      ("%s %s for %s (client %d, position encoding %s)"):format(
        info.name or "cadenza",
        info.version or "?",
        client.root_dir or "?",
        client.id,
        tostring(client.offset_encoding)
      )
    )
  end
end

function M.check()
  check_neovim()
  check_server()
  check_model()
  check_clients()
end

return M
