#!/usr/bin/env bash
# Install Debian's chromium when it is missing (browse_interactive drives it through Playwright's
# executable_path; Cadenza never downloads a browser). apt-get as root, or through sudo.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
echo "chromium: apt-get install chromium (for browse_interactive and its tests)" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { echo "chromium: still missing after apt-get" >&2; exit 1; }
