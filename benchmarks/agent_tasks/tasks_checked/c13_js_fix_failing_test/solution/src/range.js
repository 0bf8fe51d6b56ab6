/**
 * The integers from `start` up to, but not including, `end`, by `step` (default 1).
 * range(2, 5) -> [2, 3, 4]; range(0, 10, 3) -> [0, 3, 6, 9]; an empty array when start >= end.
 */
function range(start, end, step = 1) {
  const out = [];
  for (let n = start; n < end; n += step) out.push(n);
  return out;
}

module.exports = { range };
