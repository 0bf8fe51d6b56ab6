#!/usr/bin/env bash
# Set up and run the whole test suite (unit, protocol, client and end-to-end tests with a real
# llama-server and the small SmolLM2 model, and real headless Chromium for the browse tests),
# on every core.
set -euo pipefail
for arg in "$@"; do
  if [ "$arg" = "-h" ] || [ "$arg" = "--help" ]; then
    cat <<'USAGE'
usage: bash scripts/test.sh [PYTEST ARGUMENTS]

Sets up .venv (scripts/setup.sh), installs chromium when it is missing, pulls the small
smollm2-135m model, then runs the tests, one worker per core and one more. Arguments go to
pytest:
  bash scripts/test.sh -n 0            one test at a time
  bash scripts/test.sh -m "not e2e"    without the real-model tests
  bash scripts/test.sh tests/lsp -x    a part, stopping at the first failure
CADENZA_TEST_WORKERS sets the number of workers (default: the cores and one more).
For pytest's own options: .venv/bin/python -m pytest --help
USAGE
    exit 0
  fi
done
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/chromium.sh
.venv/bin/cadenza models pull smollm2-135m
# One worker per core and one more (pytest-xdist): a quarter of the time the tests wait on the
# servers, editors and browsers they start, and the extra worker fills it (2 cores: 773 s
# against 870 s with one a core). A test file per unit of work, so a module's shared fixtures
# start once; tests/conftest.py sends the real-model files out first (kept in that
# order by --no-loadscope-reorder) and keeps each of them to one core. Arguments go to pytest
# after these: `bash scripts/test.sh -n 0` runs serially, `bash scripts/test.sh tests/lsp -x`
# a part.
# The cores this process may use (nproc would follow OMP_NUM_THREADS).
cores=$(.venv/bin/python -c "import os; print(len(os.sched_getaffinity(0)))")
.venv/bin/python -m pytest -n "${CADENZA_TEST_WORKERS:-$((cores + 1))}" --dist loadfile --no-loadscope-reorder --durations=15 "$@"
