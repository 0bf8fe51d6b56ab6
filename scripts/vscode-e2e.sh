#!/usr/bin/env bash
# The VS Code tier, from a fresh machine: build, type-check, unit-test and package the extension
# (clients/vscode), then run it end to end in real VS Code (code-server 4.100.3 + headless
# Debian Chromium driven by playwright-core) against `cadenza serve` and a scripted model.
#
# Installs what is missing: Debian packages, npm dependencies and code-server through
# scripts/vscode-deps.sh, the .venv (scripts/setup.sh) when there is none and CADENZA_PYTHON is
# unset, and the small local model smollm2-135m. The test files: e2e.test.mjs (scripted model, fixed behaviour),
# conversation.test.mjs (the view as a conversation: follow-ups, @-mentions, model switch, review),
# restore.test.mjs (Restore on one of the person's messages: the file and the message back),
# panel.test.mjs (the notifications and the view as used all day: progress gone before the end,
# the one-line finish summary, wide code, the context meter; the README's side bar screenshot),
# intel.test.mjs (the editor's code intelligence for the agent), pull-model.test.mjs (a missing
# local model, Pull model from a loopback download host), models.test.mjs (the person's Ollama
# models in the model picker), local-model.test.mjs (nothing configured, the embedded llama.cpp
# model), workspace-settings.test.mjs (a workspace's .vscode/settings.json, written by the
# model, cannot widen permissions), queue.test.mjs (messages queued, removed and steered while
# a turn runs; the plan as a checklist), permissions.test.mjs ("Always allow `touch …` in this
# workspace", Manage Permissions, the context meter before and after the first reply) and
# completions.test.mjs (the status bar toggle, ghost text from Qwen2.5-Coder-1.5B accepted with
# Tab; skipped, saying so, when that model is not pulled: this script does not pull its 1.1 GB).
# Screenshots and logs go to test-artifacts/vscode/. Exits non-zero when any step fails: nothing
# else is skipped.
#
# Usage: bash scripts/vscode-e2e.sh        (CADENZA_PYTHON=/path/to/python to pick the server's venv)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
start=$(date +%s)
say() { echo "vscode-e2e: $* ($(( $(date +%s) - start )) s)" >&2; }
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

# --- Debian packages, npm dependencies, code-server ----------------------------------------
bash scripts/vscode-deps.sh

# --- the server's Python ---------------------------------------------------------------------
python=${CADENZA_PYTHON:-$repo/.venv/bin/python}
if [ ! -x "$python" ]; then
  if [ -n "${CADENZA_PYTHON:-}" ]; then
    echo "vscode-e2e: CADENZA_PYTHON=$python is not an executable" >&2
    exit 1
  fi
  say "no .venv: scripts/setup.sh (the first install builds llama.cpp)"
  bash scripts/setup.sh
fi
"$python" -c "import cadenza" || { echo "vscode-e2e: $python cannot import cadenza" >&2; exit 1; }
# The small model of the "nothing configured" test (as scripts/test.sh pulls it).
local_model=${CADENZA_VSCODE_LOCAL_MODEL:-smollm2-135m}
"$python" -m cadenza models pull "$local_model" >/dev/null

# --- the extension: type-check, unit tests, .vsix ------------------------------------------
say "extension: type-check, unit tests, package"
(
  cd clients/vscode
  npm run --silent typecheck
  npx vitest run
  npx vsce package --no-dependencies --out dist/cadenza.vsix >/dev/null
)
ls -l clients/vscode/dist/cadenza.vsix >&2

# --- code-server (installed by scripts/vscode-deps.sh) --------------------------------------
code_server_version=4.100.3
# CADENZA_CODE_SERVER_DIR: another cache folder (e.g. one that outlives fresh clones).
code_server_dir=${CADENZA_CODE_SERVER_DIR:-$repo/.cache/code-server/$code_server_version}

# --- end to end ------------------------------------------------------------------------------
say "end to end in code-server $code_server_version"
# The two files with a real model run alone first (llama-server's threads spin on every core:
# a browser beside them slows both). The scripted-model files then run two at a time, the
# longest first: each has its own code-server, browser, ports and folders, and most of their
# time is waiting on the page. CADENZA_VSCODE_JOBS=1 runs them one at a time.
status=0
(
  cd tests/vscode
  export CADENZA_PYTHON="$python" \
    CODE_SERVER="$code_server_dir/node_modules/.bin/code-server" \
    CADENZA_VSIX="$repo/clients/vscode/dist/cadenza.vsix" \
    CADENZA_VSCODE_LOCAL_MODEL="$local_model"
  node_status=0
  timeout --kill-after=10 900 node --test --test-concurrency=1 \
    local-model.test.mjs completions.test.mjs || node_status=$?
  timeout --kill-after=10 1500 node --test --test-concurrency="${CADENZA_VSCODE_JOBS:-2}" \
    e2e.test.mjs intel.test.mjs panel.test.mjs workspace-settings.test.mjs queue.test.mjs \
    conversation.test.mjs permissions.test.mjs restore.test.mjs models.test.mjs \
    pull-model.test.mjs || node_status=$?
  exit "$node_status"
) || status=$?
say "done (exit status $status); screenshots in test-artifacts/vscode/"
exit $status
