-- Small shims over the API differences between Neovim 0.10 and 0.11+.
local M = {}

M.has_011 = vim.fn.has("nvim-0.11") == 1

--- vim.validate in the 0.11 form (name, value, expected, optional), with the 0.10 table form
--- as the fallback. `expected` is a type name, a list of type names or a predicate.
---@param name string
---@param value any
---@param expected string|string[]|fun(v: any): boolean, string?
---@param optional? boolean
---@param message? string shown when a predicate fails
function M.validate(name, value, expected, optional, message)
  if M.has_011 then
    if type(expected) == "function" then
      vim.validate(name, value, expected, optional, message)
    else
      vim.validate(name, value, expected, optional)
    end
  elseif type(expected) == "function" then
    if not (optional and value == nil) then
      vim.validate({ [name] = { value, expected, message } })
    end
  else
    vim.validate({ [name] = { value, expected, optional } })
  end
end

--- client:request(...) on 0.11+, client.request(...) on 0.10.
---@return boolean ok
---@return integer? request_id
function M.request(client, method, params, handler, bufnr)
  if M.has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- client:cancel_request(id) on 0.11+, client.cancel_request(id) on 0.10.
---@return boolean ok
function M.cancel_request(client, request_id)
  if M.has_011 then
    return client:cancel_request(request_id)
  end
  return client.cancel_request(request_id)
end

--- The byte index of `index` (counted in `encoding` units: "utf-8", "utf-16", "utf-32") in
--- `line`, clamped to the line's length.
---@return integer
function M.byteindex(line, encoding, index)
  if encoding == "utf-8" then
    return math.min(index, #line)
  end
  if M.has_011 then
    return vim.str_byteindex(line, encoding, index, false)
  end
  local ok, byte = pcall(vim.str_byteindex, line, index, encoding == "utf-16")
  return ok and byte or #line
end

--- client:stop() / client.stop().
function M.stop(client, force)
  if M.has_011 then
    return client:stop(force)
  end
  return client.stop(force)
end

--- client:is_stopped() / client.is_stopped().
function M.is_stopped(client)
  if M.has_011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- Start a client without attaching any buffer; returns its id or nil.
---@param config table vim.lsp.ClientConfig
---@return integer?
function M.start_client(config)
  if M.has_011 then
    return vim.lsp.start(config, {
      attach = false,
      reuse_client = function()
        return false -- one client per root is decided by the caller
      end,
    })
  end
  return vim.lsp.start_client(config)
end

--- The line diff of two texts as hunks {start_a, count_a, start_b, count_b}.
---@return integer[][]
function M.diff_hunks(a, b)
  local diff = (vim.text and vim.text.diff) or vim.diff
  local ok, hunks = pcall(diff, a, b, { result_type = "indices" })
  if ok and type(hunks) == "table" then
    return hunks
  end
  return {}
end

return M
