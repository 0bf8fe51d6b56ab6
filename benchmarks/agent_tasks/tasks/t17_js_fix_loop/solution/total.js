function sum(values) {
  let s = 0;
  for (let i = 0; i < values.length; i++) {
    s += values[i];
  }
  return s;
}

module.exports = { sum };
