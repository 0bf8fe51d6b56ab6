-- A JSON-RPC error from the server in plain words: its message without the protocol's
-- prefixes ("Invalid Params: cadenza.promptSession: ...") and without the error code.
local M = {}

--- The sentence to show for `err` ({code, message}).
---@param err table|string|nil
---@return string
function M.text(err)
  local message = type(err) == "table" and err.message or err
  message = type(message) == "string" and vim.trim(message) or ""
  message = message:gsub("^Invalid [Pp]arams:%s*", ""):gsub("^cadenza%.%w+:%s*", "")
  if message == "" then
    return "the server gave no reason"
  end
  return message
end

return M
