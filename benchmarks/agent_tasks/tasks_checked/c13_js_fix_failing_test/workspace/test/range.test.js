const test = require("node:test");
const assert = require("node:assert");
const { range } = require("../src/range");

test("end is excluded", () => {
  assert.deepStrictEqual(range(2, 5), [2, 3, 4]);
});

test("steps", () => {
  assert.deepStrictEqual(range(0, 10, 3), [0, 3, 6, 9]);
});

test("empty when start reaches end", () => {
  assert.deepStrictEqual(range(4, 4), []);
});
