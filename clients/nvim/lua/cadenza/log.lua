-- The plugin's own log: server log messages, client starts and exits, failed requests.
-- Shown by :CadenzaLog; the server's stderr goes to Neovim's LSP log (:CadenzaLog!).
local M = {}

local MAX_LINES = 2000
local lines = {}
local log_buf = nil

local LEVELS = { "ERROR", "WARN", "INFO", "LOG" }

--- Add one entry (multi-line messages become several lines).
---@param level string "ERROR", "WARN", "INFO" or "LOG"
---@param message string
function M.add(level, message)
  local stamp = os.date("%H:%M:%S")
  for i, text in ipairs(vim.split(tostring(message), "\n", { plain = true })) do
    local prefix = i == 1 and ("%s %-5s "):format(stamp, level) or (" "):rep(15)
    lines[#lines + 1] = prefix .. text
  end
  if #lines > MAX_LINES then
    lines = vim.list_slice(lines, #lines - MAX_LINES + 1)
  end
end

--- A LSP MessageType (1 error .. 4 log) as a level name.
---@param message_type integer?
---@return string
function M.level_of(message_type)
  return LEVELS[message_type or 4] or "LOG"
end

---@return string[]
function M.lines()
  return vim.deepcopy(lines)
end

--- Open the log in a scratch buffer (bang: Neovim's LSP log file, with the server's stderr).
---@param bang? boolean
function M.open(bang)
  if bang then
    vim.cmd.split(vim.fn.fnameescape(vim.lsp.get_log_path()))
    vim.bo.readonly = true
    vim.cmd("normal! G")
    return
  end
  local buf = log_buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    buf = vim.api.nvim_create_buf(false, true)
    pcall(vim.api.nvim_buf_set_name, buf, "Cadenza log")
    vim.bo[buf].filetype = "cadenzalog"
    log_buf = buf
  end
  local content = M.lines()
  content[#content + 1] = ""
  content[#content + 1] = ("The server's stderr is in Neovim's LSP log: %s (:CadenzaLog!)"):format(
    vim.lsp.get_log_path()
  )
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, content)
  vim.bo[buf].modifiable = false
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd("botright split")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
end

return M
