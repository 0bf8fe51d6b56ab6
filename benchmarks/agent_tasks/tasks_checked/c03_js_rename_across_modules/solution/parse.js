// Parsing of one CSV row of the sales export.
function parseRecord(line) {
  const [date, region, amount] = line.split(",").map((part) => part.trim());
  return { date, region, amount: Number(amount) };
}

module.exports = { parseRecord };
