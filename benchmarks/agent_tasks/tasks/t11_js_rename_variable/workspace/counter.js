let cnt = 0;

function increment() {
  cnt = cnt + 1;
  return cnt;
}

function reset() {
  cnt = 0;
}

module.exports = { increment, reset };
