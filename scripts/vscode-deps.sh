#!/usr/bin/env bash
# What the VS Code tier (scripts/vscode-e2e.sh) installs before it builds or runs anything:
# Debian packages (chromium ripgrep libkrb5-dev pkg-config build-essential), the npm
# dependencies of clients/vscode and tests/vscode (reinstalled only when a lock file changed)
# and code-server (cached in .cache/code-server/VERSION, or CADENZA_CODE_SERVER_DIR). Needs no
# Python and no .venv, so .ci/run runs it while pip builds llama.cpp. Re-running is cheap: each
# step is skipped when its result is there.
#
# Usage: bash scripts/vscode-deps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
start=$(date +%s)
say() { echo "vscode-deps: $* ($(( $(date +%s) - start )) s)" >&2; }
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

# --- Debian packages -------------------------------------------------------------------------
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
for pkg in libkrb5-dev pkg-config build-essential; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # Other jobs on the machine may hold dpkg's lock for a while: wait for it instead of failing.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    "${missing[@]}" >/dev/null
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "vscode-deps: Node 20 or later is needed (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi

# --- npm dependencies, reinstalled only when the lock file changed -------------------------
npm_deps() {
  local dir=$1 stamp="$1/node_modules/.cadenza-lock.sha256" sum
  sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
    return
  fi
  say "npm ci in $dir"
  (cd "$dir" && npm ci --loglevel=error)
  echo "$sum" > "$stamp"
}
npm_deps clients/vscode
npm_deps tests/vscode

# --- code-server -----------------------------------------------------------------------------
code_server_version=4.100.3
code_server_dir=${CADENZA_CODE_SERVER_DIR:-$repo/.cache/code-server/$code_server_version}
CODE_SERVER_VERSION=$code_server_version bash tests/vscode/install-code-server.sh "$code_server_dir"
say "done"
