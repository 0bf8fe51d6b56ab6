/**
 * Split `items` into arrays of `size` elements (the last one may be shorter).
 * chunk([1, 2, 3, 4, 5], 2) -> [[1, 2], [3, 4], [5]]. A size below 1 throws a RangeError.
 */
function chunk(items, size) {
  throw new Error("not implemented");
}

module.exports = { chunk };
