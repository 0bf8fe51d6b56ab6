// Parsing of one CSV row of the sales export.
function parseRow(line) {
  const [date, region, amount] = line.split(",").map((part) => part.trim());
  return { date, region, amount: Number(amount) };
}

module.exports = { parseRow };
