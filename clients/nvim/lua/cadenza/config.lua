-- Options of require("cadenza").setup(): defaults, validation, the server command.
local compat = require("cadenza.compat")

local M = {}

M.name = "cadenza"

---@class cadenza.Options
M.defaults = {
  -- The server command. nil: {"cadenza", "serve"} when `cadenza` is on PATH, else
  -- {"python3", "-P", "-m", "cadenza", "serve"} (-P: the working folder, often the project,
  -- is not on sys.path, so a repository's cadenza/ never runs).
  cmd = nil,
  -- Extra environment of the server process (e.g. { OPENAI_BASE_URL = "..." }).
  cmd_env = nil,
  -- "PROVIDER/MODEL" (e.g. "openai/gpt-4.1", "local/qwen2.5-coder-1.5b"). nil: the server's
  -- configuration decides (CADENZA_MODEL, cadenza.toml, else the embedded local model).
  model = nil,
  -- Workflow name for new sessions (e.g. "plan-implement-review"). nil: the server's default.
  workflow = nil,
  -- initializationOptions sent to the server (maxSteps, maxTokens, temperature, contextSize...).
  init_options = {},
  -- Files or folders that mark a workspace root, searched upwards from the buffer.
  root_markers = { ".git", ".hg", "cadenza.toml", ".cadenza" },
  -- A root folder, or function(bufnr) -> folder|nil. nil: root_markers, else the cwd.
  root_dir = nil,
  -- The "Cadenza" session buffer.
  panel = {
    position = "bottom", -- "bottom" or "right"
    size = 12, -- lines (bottom) or columns (right)
    auto_open = true, -- open it when a session starts
  },
  -- Review of a turn's changes (:h cadenza-review): shown in the changed buffers after each
  -- turn, with these buffer-local normal-mode keys while hunks are pending.
  review = {
    auto = true, -- show the changes when a turn that changed files ends
    keys = {
      keep = "<LocalLeader>k", -- keep the hunk under the cursor
      undo = "<LocalLeader>u", -- undo the hunk under the cursor
      keep_file = "<LocalLeader>K", -- keep every pending hunk of the file
      undo_file = "<LocalLeader>U", -- undo every pending hunk of the file
      next = "]h", -- the next pending hunk
      prev = "[h", -- the previous pending hunk
    },
  },
  -- Inline completions (:h cadenza-completion): ghost text from the local model as you type,
  -- with these buffer-local insert-mode keys (false: not set). On by default: entering insert
  -- mode in a file buffer starts the server of its workspace; enabled = false turns them off.
  completion = {
    enabled = true,
    keys = {
      accept = "<Tab>", -- insert the ghost text (else the key does what it did)
      dismiss = "<C-]>", -- hide it (Neovim 0.12+ hides it when the cursor moves)
    },
  },
  -- vim.notify when a session's progress begins and ends.
  notify_progress = true,
  -- Milliseconds before buffer changes are sent to the server. 0 keeps the agent's view of
  -- your buffers exact at every moment (each change sends the whole buffer).
  debounce_text_changes = 0,
}

local function deep_defaults()
  return vim.deepcopy(M.defaults)
end

---@type cadenza.Options
M.options = deep_defaults()

local function list_of_strings(value)
  if type(value) ~= "table" or #value == 0 then
    return false
  end
  for _, item in ipairs(value) do
    if type(item) ~= "string" or item == "" then
      return false
    end
  end
  return true
end

local function model_name(value)
  return type(value) == "string" and value:match("^[%w%._%-]+/.+$") ~= nil
end

-- Every option name (some default to nil, so the defaults table alone cannot tell).
local KNOWN = {
  [""] = {
    "cmd",
    "cmd_env",
    "model",
    "workflow",
    "init_options",
    "root_markers",
    "root_dir",
    "panel",
    "review",
    "completion",
    "notify_progress",
    "debounce_text_changes",
  },
  ["panel."] = { "position", "size", "auto_open" },
  ["review."] = { "auto", "keys" },
  ["review.keys."] = { "keep", "undo", "keep_file", "undo_file", "next", "prev" },
  ["completion."] = { "enabled", "keys" },
  ["completion.keys."] = { "accept", "dismiss" },
}

local function check_unknown(opts, where)
  local names = KNOWN[where]
  for key in pairs(opts) do
    if not vim.tbl_contains(names, key) then
      error(
        ("cadenza.setup: unknown option %s%s (known: %s)"):format(where, key, table.concat(names, ", ")),
        0
      )
    end
  end
end

--- Validate a full options table (defaults merged in).
---@param o cadenza.Options
function M.validate(o)
  compat.validate("cmd", o.cmd, list_of_strings, true, "a non-empty list of strings")
  compat.validate("cmd_env", o.cmd_env, "table", true)
  compat.validate("model", o.model, model_name, true, 'a "PROVIDER/MODEL" string')
  compat.validate("workflow", o.workflow, "string", true)
  compat.validate("init_options", o.init_options, "table")
  compat.validate("root_markers", o.root_markers, list_of_strings, false, "a list of names")
  compat.validate("root_dir", o.root_dir, { "string", "function" }, true)
  compat.validate("panel", o.panel, "table")
  compat.validate("panel.position", o.panel.position, function(v)
    return v == "bottom" or v == "right"
  end, false, '"bottom" or "right"')
  compat.validate("panel.size", o.panel.size, function(v)
    return type(v) == "number" and v >= 1
  end, false, "a positive number")
  compat.validate("panel.auto_open", o.panel.auto_open, "boolean")
  compat.validate("review", o.review, "table")
  compat.validate("review.auto", o.review.auto, "boolean")
  compat.validate("review.keys", o.review.keys, "table")
  for name, key in pairs(o.review.keys) do
    compat.validate("review.keys." .. name, key, function(v)
      return v == false or (type(v) == "string" and v ~= "")
    end, false, "a key (string) or false")
  end
  compat.validate("completion", o.completion, "table")
  compat.validate("completion.enabled", o.completion.enabled, "boolean")
  compat.validate("completion.keys", o.completion.keys, "table")
  for name, key in pairs(o.completion.keys) do
    compat.validate("completion.keys." .. name, key, function(v)
      return v == false or (type(v) == "string" and v ~= "")
    end, false, "a key (string) or false")
  end
  compat.validate("notify_progress", o.notify_progress, "boolean")
  compat.validate("debounce_text_changes", o.debounce_text_changes, function(v)
    return type(v) == "number" and v >= 0
  end, false, "a number of milliseconds >= 0")
end

--- Merge `opts` over the defaults, validate, and make them current.
---@param opts? table
function M.setup(opts)
  opts = opts or {}
  compat.validate("opts", opts, "table")
  check_unknown(opts, "")
  if type(opts.panel) == "table" then
    check_unknown(opts.panel, "panel.")
  end
  if type(opts.review) == "table" then
    check_unknown(opts.review, "review.")
    if type(opts.review.keys) == "table" then
      check_unknown(opts.review.keys, "review.keys.")
    end
  end
  if type(opts.completion) == "table" then
    check_unknown(opts.completion, "completion.")
    if type(opts.completion.keys) == "table" then
      check_unknown(opts.completion.keys, "completion.keys.")
    end
  end
  local merged = vim.tbl_deep_extend("force", deep_defaults(), opts)
  -- Lists replace, they do not merge by index.
  for _, key in ipairs({ "cmd", "root_markers" }) do
    if opts[key] ~= nil then
      merged[key] = vim.deepcopy(opts[key])
    end
  end
  M.validate(merged)
  M.options = merged
end

--- The server command and where it came from ("configured", "default" or "fallback").
---@return string[] cmd
---@return string source
function M.server_cmd()
  if M.options.cmd then
    return vim.deepcopy(M.options.cmd), "configured"
  end
  if vim.fn.executable("cadenza") == 1 then
    return { "cadenza", "serve" }, "default"
  end
  return { "python3", "-P", "-m", "cadenza", "serve" }, "fallback"
end

--- The command printing the server's version: `cmd` up to "serve", then "--version".
---@param cmd string[]
---@return string[]
function M.version_cmd(cmd)
  local out = {}
  for _, part in ipairs(cmd) do
    if part == "serve" then
      break
    end
    out[#out + 1] = part
  end
  if #out == 0 then
    out = { cmd[1] }
  end
  out[#out + 1] = "--version"
  return out
end

--- The model sessions will use when the plugin decides it, else nil.
---@return string?
function M.model()
  local o = M.options
  return o.model or (type(o.init_options.model) == "string" and o.init_options.model or nil)
end

--- The server's extra environment: `cmd_env`, plus CADENZA_MODEL from the model of setup().
--- The server takes a model that switches the provider or names a file from
--- initializationOptions only when it repeats the person's configuration (editors may merge a
--- project's settings into them); CADENZA_MODEL is that configuration. nil when empty.
---@return table?
function M.cmd_env()
  local env = vim.deepcopy(M.options.cmd_env or {})
  local model = M.model()
  if model then
    env.CADENZA_MODEL = model
  end
  if next(env) == nil then
    return nil
  end
  return env
end

--- initializationOptions for a new server (nil when there are none: an empty Lua table would
--- be sent as a JSON array).
---@return table?
function M.init_options()
  local init = vim.deepcopy(M.options.init_options)
  if M.options.model then
    init.model = M.options.model
  end
  if next(init) == nil then
    return nil
  end
  return init
end

return M
