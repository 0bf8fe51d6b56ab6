#!/usr/bin/env bash
# Print 1..N, one number per line.
n="$1"
i=1
while [ "$i" -le "$n" ]; do
  echo "$i"
  i=$((i + 1))
done
