#!/usr/bin/env bash
# The main job: set up, pull the embedded default model, and let Cadenza do the example task
# (rename a function everywhere) on a fresh copy of examples/inventory.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'USAGE'
usage: bash scripts/demo.sh

Sets up .venv (scripts/setup.sh), pulls the default local model, copies examples/inventory to
a temporary folder and asks Cadenza to rename calc_total to compute_total there. Ends with
"demo: the task is done" when the rename is complete (exit 0), else exits 1.
Environment: CADENZA_DEMO_MODEL (default qwen2.5-coder-1.5b), CADENZA_DEMO_WORKSPACE (where
the copy goes), CADENZA_DEMO_TASK (the task).
USAGE
    exit 0
    ;;
esac
cd "$(dirname "$0")/.."

bash scripts/setup.sh
MODEL=${CADENZA_DEMO_MODEL:-qwen2.5-coder-1.5b}
.venv/bin/cadenza models pull "$MODEL"

WORKSPACE=${CADENZA_DEMO_WORKSPACE:-$(mktemp -d)/inventory}
rm -rf "$WORKSPACE"
cp -r examples/inventory "$WORKSPACE"
echo "workspace: $WORKSPACE" >&2

TASK=${CADENZA_DEMO_TASK:-"Rename the function calc_total to compute_total everywhere in the workspace (its definition and every use)."}
.venv/bin/cadenza run --workspace "$WORKSPACE" --model "local/$MODEL" --yes "$TASK"

echo
echo "== result =="
# The files the run changed, named as in the workspace.
(cd "$WORKSPACE" && find . -type f ! -path '*/__pycache__/*' | sort) | while read -r f; do
  if [ ! -f "examples/inventory/$f" ]; then
    echo "added: ${f#./}"
  elif ! cmp -s "examples/inventory/$f" "$WORKSPACE/$f"; then
    echo "changed: ${f#./}"
  fi
done
if grep -q "def compute_total" "$WORKSPACE/inventory.py" \
   && grep -q "import Item, compute_total" "$WORKSPACE/report.py" \
   && ! grep -rq "calc_total" "$WORKSPACE"; then
  python_bin="$(pwd)/.venv/bin/python"
  (cd "$WORKSPACE" && "$python_bin" report.py)
  echo "demo: the task is done: calc_total is renamed to compute_total in both files"
else
  echo "demo: the model did not finish the rename; see the transcript above" >&2
  exit 1
fi
