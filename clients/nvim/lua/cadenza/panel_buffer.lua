-- The "Cadenza" scratch buffer as a place to write: created on first use, opened in a split,
-- lines appended (with a highlight) while windows that showed the end keep following it, a
-- streamed line continued, a marked line rewritten. What the lines say is cadenza.panel's job.
local config = require("cadenza.config")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("cadenza.panel")
local hl_ns = api.nvim_create_namespace("cadenza.panel.hl")

--- What the writer remembers about the buffer's end (reset with the buffer).
M.state = {
  buf = nil, ---@type integer?
  writer = nil, ---@type string? the session whose lines were written last
  text_open = false, -- the last line is agent text that the next chunk continues
  streamed = "", -- the agent text written since the last other line (the final answer, often)
  tools = {}, ---@type table<string, {mark: integer, title: string, status: string, note: string?}>
}
local state = M.state

local function define_highlights()
  local links = {
    CadenzaHeader = "Title",
    CadenzaToolPending = "Comment",
    CadenzaToolRunning = "DiagnosticInfo",
    CadenzaToolDone = "DiagnosticOk",
    CadenzaToolFailed = "DiagnosticError",
    CadenzaEnd = "Special",
    CadenzaWaiting = "WarningMsg",
    CadenzaUser = "String",
    CadenzaMovement = "Identifier",
  }
  for group, target in pairs(links) do
    api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

--- The panel buffer, created on first use.
---@return integer
function M.buf()
  if state.buf and api.nvim_buf_is_valid(state.buf) then
    return state.buf
  end
  define_highlights()
  local buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, "Cadenza")
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  -- Markdown: the agent writes Markdown, and render plugins (render-markdown.nvim,
  -- markview.nvim) and treesitter highlighting apply to the buffer.
  vim.bo[buf].filetype = "markdown"
  vim.b[buf].cadenza = true
  vim.bo[buf].modifiable = false
  state.buf = buf
  state.writer = nil
  state.text_open = false
  state.streamed = ""
  state.tools = {}
  return buf
end

--- All lines of the panel (for tests and statuslines).
---@return string[]
function M.lines()
  return api.nvim_buf_get_lines(M.buf(), 0, -1, false)
end

--- Open the panel in a split without moving the cursor (unless `focus`).
---@param focus? boolean
---@return integer win
function M.open(focus)
  local buf = M.buf()
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    local panel = config.options.panel
    local right = panel.position == "right"
    win = api.nvim_open_win(buf, false, {
      split = right and "right" or "below",
      win = -1,
      width = right and panel.size or nil,
      height = (not right) and panel.size or nil,
    })
    vim.wo[win].wrap = true
    vim.wo[win].linebreak = true
    vim.wo[win].number = false
    vim.wo[win].relativenumber = false
    vim.wo[win].signcolumn = "no"
    vim.wo[win].winfixheight = not right
    vim.wo[win].winfixwidth = right
    api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(buf), 0 })
  end
  if focus then
    api.nvim_set_current_win(win)
  end
  return win
end

local function modify(buf, fn)
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[buf].modifiable = false
  if not ok then
    error(err, 0)
  end
end

local function follow(buf, old_last)
  local current = api.nvim_get_current_win()
  local last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == buf then
      local row = api.nvim_win_get_cursor(win)[1]
      if win ~= current or row >= old_last then
        api.nvim_win_set_cursor(win, { last, 0 })
      end
    end
  end
end

--- The buffer has nothing written yet.
---@param buf integer
---@return boolean
function M.is_empty(buf)
  return api.nvim_buf_line_count(buf) == 1 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
end

--- Append lines at the end; returns the 0-based row of the first one.
---@param lines string[]
---@param hl? string highlight group for these lines
---@return integer
function M.append(lines, hl)
  local buf = M.buf()
  local old_last = api.nvim_buf_line_count(buf)
  local first
  modify(buf, function()
    if M.is_empty(buf) then
      first = 0
      api.nvim_buf_set_lines(buf, 0, 1, false, lines)
    else
      first = old_last
      api.nvim_buf_set_lines(buf, old_last, old_last, false, lines)
    end
  end)
  if hl then
    for i, line in ipairs(lines) do
      api.nvim_buf_set_extmark(buf, hl_ns, first + i - 1, 0, { end_col = #line, hl_group = hl })
    end
  end
  state.text_open = false
  state.streamed = ""
  follow(buf, old_last)
  return first
end

--- Stream text: it continues the last line when that is streamed text, else starts new lines.
---@param text string
function M.stream(text)
  local buf = M.buf()
  local pieces = vim.split(text, "\n", { plain = true })
  if state.text_open then
    local old_last = api.nvim_buf_line_count(buf)
    modify(buf, function()
      local last = api.nvim_buf_get_lines(buf, old_last - 1, old_last, false)[1] or ""
      pieces[1] = last .. pieces[1]
      api.nvim_buf_set_lines(buf, old_last - 1, old_last, false, pieces)
    end)
    follow(buf, old_last)
  else
    M.append(pieces)
  end
  state.text_open = true
  state.streamed = state.streamed .. text
end

--- A mark on a row that stays on its line while lines are added (for `rewrite`).
---@param row integer 0-based
---@return integer
function M.mark(row)
  return api.nvim_buf_set_extmark(M.buf(), ns, row, 0, {})
end

--- The row (0-based) a `mark` is on now; nil when the buffer was made again since.
---@param mark integer
---@return integer?
function M.mark_row(mark)
  return api.nvim_buf_get_extmark_by_id(M.buf(), ns, mark, {})[1]
end

--- Replace the line at `mark` with `line` highlighted as `hl`.
---@param mark integer
---@param line string
---@param hl? string
function M.rewrite(mark, line, hl)
  local buf = M.buf()
  local row = api.nvim_buf_get_extmark_by_id(buf, ns, mark, {})[1]
  if not row then
    return
  end
  modify(buf, function()
    api.nvim_buf_set_lines(buf, row, row + 1, false, { line })
  end)
  api.nvim_buf_clear_namespace(buf, hl_ns, row, row + 1)
  if hl then
    api.nvim_buf_set_extmark(buf, hl_ns, row, 0, { end_col = #line, hl_group = hl })
  end
end

return M
