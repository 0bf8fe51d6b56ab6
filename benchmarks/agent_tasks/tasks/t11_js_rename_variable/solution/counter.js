let count = 0;

function increment() {
  count = count + 1;
  return count;
}

function reset() {
  count = 0;
}

module.exports = { increment, reset };
