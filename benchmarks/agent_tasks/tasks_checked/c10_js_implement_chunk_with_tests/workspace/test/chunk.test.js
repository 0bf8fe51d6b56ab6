const test = require("node:test");
const assert = require("node:assert");
const { chunk } = require("../chunk");

test("splits into pairs", () => {
  assert.deepStrictEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
});

test("an empty array gives no chunk", () => {
  assert.deepStrictEqual(chunk([], 3), []);
});
