#!/usr/bin/env bash
# Build the VS Code extension from clients/vscode and install it into VS Code (or code-server,
# VSCodium: CODE=code-server / CODE=codium), after setting up the server in ./.venv.
set -euo pipefail
case "${1:-}" in
  -h | --help)
    cat <<'USAGE'
usage: bash scripts/install-vscode.sh

Sets up .venv (scripts/setup.sh), builds the VS Code extension in clients/vscode and installs
it, then prints the user setting that points the extension at the server.
Environment: CODE (the editor's command: code, code-server or codium; default code).
USAGE
    exit 0
    ;;
esac
cd "$(dirname "$0")/.."

CODE=${CODE:-code}
if ! command -v "$CODE" >/dev/null 2>&1; then
  echo "install-vscode: '$CODE' is not on PATH; install VS Code's command line ('Shell Command:" \
       "Install code command in PATH') or set CODE=code-server / CODE=codium" >&2
  exit 1
fi
bash scripts/setup.sh
(cd clients/vscode && npm ci --no-audit --no-fund --loglevel=error && npm run --silent package)
"$CODE" --install-extension clients/vscode/dist/cadenza.vsix --force
server="$(pwd)/.venv/bin/cadenza"
cat <<MSG

install-vscode: the Cadenza extension is installed. Unless \`cadenza\` is on your PATH, add this
to your VS Code *user* settings (Preferences: Open User Settings (JSON)), then reload the window:

  "cadenza.server.command": "$server"
MSG
