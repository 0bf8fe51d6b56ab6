const { parseRecord } = require("./parse");

function loadRows(text) {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(parseRecord);
}

module.exports = { loadRows };
