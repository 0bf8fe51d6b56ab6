const parse = require("./parse");
const { loadRows } = require("./load");

function totalByRegion(text) {
  const totals = {};
  for (const row of loadRows(text)) {
    totals[row.region] = (totals[row.region] || 0) + row.amount;
  }
  return totals;
}

function largest(lines) {
  return Math.max(...lines.map((line) => parse.parseRow(line).amount));
}

module.exports = { totalByRegion, largest };
