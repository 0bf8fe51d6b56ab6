-- What the Cadenza buffer says when a turn ends about its review: the files with changes to
-- review and the keys, and the server's sentences on what the turn's commands changed that the
-- review cannot list (listChanges' `unlisted`).
local M = {}

local review = require("cadenza.review")

--- The server's sentences on what the turn's commands changed that the review cannot list
--- (a workspace too large to compare, files that are not text), as notes in the Cadenza buffer.
---@param session cadenza.Session
---@param result table listChanges' result
local function note_unlisted(session, result)
  if session.replaying or type(result.unlisted) ~= "table" then
    return
  end
  for _, sentence in ipairs(result.unlisted) do
    require("cadenza.panel").note(session, sentence)
  end
end

--- A turn that ran a command but edited nothing ended: only the review's notes apply.
---@param session cadenza.Session
function M.commands_ended(session)
  local c = vim.lsp.get_client_by_id(session.client_id)
  if not c then
    return
  end
  require("cadenza.client").execute(c, "cadenza.listChanges", { sessionId = session.id }, function(err, result)
    if not err and type(result) == "table" then
      note_unlisted(session, result)
    end
  end)
end

--- A turn ended: show its changes, and say in the Cadenza buffer how to review them.
---@param session cadenza.Session
function M.turn_ended(session)
  review.show(session, function(_, result)
    note_unlisted(session, result)
    local summary = review.summary()
    if #summary == 0 then
      return
    end
    local names = {}
    for _, item in ipairs(summary) do
      names[#names + 1] = ("%s (%d)"):format(vim.fn.fnamemodify(item.path, ":."), item.count)
    end
    local keys = review.keys_named()
    require("cadenza.panel").note(
      session,
      ("changes to review: %s — in the file, %s keeps and %s undoes the change under the cursor (:h cadenza-review)"):format(
        table.concat(names, ", "),
        keys.keep or ":CadenzaReview keep",
        keys.undo or ":CadenzaReview undo"
      )
    )
  end)
end

return M
