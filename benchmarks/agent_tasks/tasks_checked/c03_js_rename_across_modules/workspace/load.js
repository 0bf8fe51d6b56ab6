const { parseRow } = require("./parse");

function loadRows(text) {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map(parseRow);
}

module.exports = { loadRows };
