/**
 * Split `items` into arrays of `size` elements (the last one may be shorter).
 * chunk([1, 2, 3, 4, 5], 2) -> [[1, 2], [3, 4], [5]]. A size below 1 throws a RangeError.
 */
function chunk(items, size) {
  if (!(size >= 1)) throw new RangeError("size must be at least 1");
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

module.exports = { chunk };
