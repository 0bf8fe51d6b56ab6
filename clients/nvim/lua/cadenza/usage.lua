-- Token usage per turn (one run of a session, up to its session_end), from the server's
-- `model_reply` updates ({promptTokens?, completionTokens?, cost?: {amount, currency}}) and
-- `usage_update` ({used, size, cost?}) where sent. The prompt of the latest request is the context the model read last; completion
-- tokens add up over the turn. Shown at each end in the Cadenza buffer and by
-- require("cadenza").statusline().
local M = {}

local function count(value)
  if type(value) == "number" and value >= 0 and value == value then
    return math.floor(value + 0.5)
  end
end

--- A new turn's usage.
---@return {requests: integer, prompt?: integer, completion?: integer, used?: integer, size?: integer, cost?: table}
function M.new()
  return { requests = 0 }
end

local function valid_cost(cost)
  if type(cost) == "table" and type(cost.amount) == "number" and cost.amount >= 0 then
    return { amount = cost.amount, currency = type(cost.currency) == "string" and cost.currency or "" }
  end
end

--- Add a model_reply update.
function M.add_reply(usage, update)
  usage.requests = usage.requests + 1
  local prompt, completion = count(update.promptTokens), count(update.completionTokens)
  if prompt then
    usage.prompt = prompt
  end
  if completion then
    usage.completion = (usage.completion or 0) + completion
  end
  -- Each call's cost, when the server knows it, adds up over the turn.
  local cost = valid_cost(update.cost)
  if cost and usage.cost and usage.cost.currency == cost.currency then
    usage.cost.amount = usage.cost.amount + cost.amount
  elseif cost then
    usage.cost = cost
  end
end

--- Add a usage_update ({used, size}).
function M.add_update(usage, update)
  local used, size = count(update.used), count(update.size)
  if used then
    usage.used = used
  end
  if size and size > 0 then
    usage.size = size
  end
  -- A running total (ACP's shape), when a server sends one.
  usage.cost = valid_cost(update.cost) or usage.cost
end

--- {amount = 0.0123, currency = "USD"} → "$0.0123"; other currencies: "0.0123 EUR".
---@param cost {amount: number, currency: string}?
---@return string?
function M.money(cost)
  if not cost then
    return nil
  end
  local amount = cost.amount >= 1 and ("%.2f"):format(cost.amount) or ("%.4f"):format(cost.amount)
  if cost.currency == "USD" or cost.currency == "" then
    return "$" .. amount
  end
  return amount .. " " .. cost.currency
end

--- 1843 → "1,843"; 12345 → "12.3k"; 1234567 → "1.23M".
---@param n integer
---@return string
function M.tokens(n)
  if n < 10000 then
    local s = tostring(n)
    return (s:reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", ""))
  elseif n < 1000000 then
    return (n < 100000 and ("%.1fk") or ("%.0fk")):format(n / 1000)
  end
  return ("%.2fM"):format(n / 1000000)
end

--- One line: "context 1,843 / 8,192 tokens (22%) · 41 tokens out · 2 requests"; "" before a request.
---@param usage table?
---@param size? integer the context window when known otherwise (the contextSize setting)
---@return string
function M.format(usage, size)
  if not usage or (usage.requests == 0 and not usage.used) then
    return ""
  end
  local parts = {}
  local used = usage.used or usage.prompt
  size = usage.size or size
  if used then
    if size then
      parts[#parts + 1] = ("context %s / %s tokens (%d%%)"):format(
        M.tokens(used),
        M.tokens(size),
        math.min(100, math.floor(100 * used / size + 0.5))
      )
    else
      parts[#parts + 1] = ("context %s tokens"):format(M.tokens(used))
    end
  end
  if usage.completion then
    parts[#parts + 1] = ("%s tokens out"):format(M.tokens(usage.completion))
  end
  if usage.cost then
    parts[#parts + 1] = M.money(usage.cost)
  end
  if usage.requests > 0 then
    parts[#parts + 1] = ("%d request%s"):format(usage.requests, usage.requests == 1 and "" or "s")
    if not used and not usage.completion then
      parts[#parts + 1] = "no token counts reported"
    end
  end
  return table.concat(parts, " · ")
end

--- Short form for statuslines: "ctx 1,843/8,192 · 41 out"; "" without counts.
function M.short(usage, size)
  if not usage then
    return ""
  end
  local parts = {}
  local used = usage.used or usage.prompt
  size = usage.size or size
  if used then
    parts[#parts + 1] = size and ("ctx %s/%s"):format(M.tokens(used), M.tokens(size)) or ("ctx %s"):format(M.tokens(used))
  end
  if usage.completion then
    parts[#parts + 1] = ("%s out"):format(M.tokens(usage.completion))
  end
  if usage.cost then
    parts[#parts + 1] = M.money(usage.cost)
  end
  return table.concat(parts, " · ")
end

return M
