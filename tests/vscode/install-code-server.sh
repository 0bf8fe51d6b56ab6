#!/usr/bin/env bash
# Install code-server (VS Code in the browser) from npm into a cache folder, offline-safe.
#
# Usage: install-code-server.sh DEST   (e.g. .cache/code-server/4.100.3)
#
# A plain `npm install code-server` cannot work here (no GitHub downloads, root user), so this
# is the manual post-install: skip install scripts,
# build argon2 and node-pty from source, take Debian's ripgrep, and link what the postinstall
# would have linked. DEST/.complete marks a finished install; a half-done one is redone.
# Needs: node 20, npm, build-essential, pkg-config, libkrb5-dev, ripgrep (/usr/bin/rg).
set -euo pipefail

VERSION=${CODE_SERVER_VERSION:-4.100.3}
dest=${1:?usage: install-code-server.sh DEST}
# Absolute: the install works inside DEST (cd), then runs DEST's code-server by its path.
dest=$(realpath -m -- "$dest")

if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$VERSION" ]; then
  echo "code-server $VERSION: cached in $dest" >&2
  exit 0
fi

start=$(date +%s)
rm -rf "$dest"
mkdir -p "$dest"
# Absolute: the steps below run inside DEST and still name files under it.
dest=$(cd "$dest" && pwd)
cd "$dest"
export npm_config_yes=true npm_config_nodedir=/usr npm_config_update_notifier=false
export npm_config_fund=false npm_config_audit=false

step() { echo "code-server install: $* ($(( $(date +%s) - start )) s)" >&2; }

step "npm install --ignore-scripts code-server@$VERSION"
echo '{"name": "cadenza-code-server", "private": true}' > package.json
npm install --ignore-scripts --no-save --loglevel=error "code-server@$VERSION"

step "argon2 from source"
npm rebuild argon2 --build-from-source --loglevel=error

vscode=node_modules/code-server/lib/vscode
step "VS Code's server dependencies"
(cd "$vscode" && npm install --omit=dev --ignore-scripts --loglevel=error)
mkdir -p "$vscode/node_modules/@vscode/ripgrep/bin"
cp /usr/bin/rg "$vscode/node_modules/@vscode/ripgrep/bin/rg"
step "native modules (node-pty, ...)"
(cd "$vscode" && npm rebuild --loglevel=error)
ln -sfn node_modules "$vscode/node_modules.asar"
ln -sfn code-linux.sh "$vscode/bin/remote-cli/code-server"
ln -sfn browser-linux.sh "$vscode/bin/helpers/browser.sh"
step "built-in extensions' dependencies"
(cd "$vscode/extensions" && npm install --omit=dev --loglevel=error)

# --version writes a default config file: keep it out of the home folder.
XDG_CONFIG_HOME="$dest/.xdg-config" "$dest/node_modules/.bin/code-server" --version >&2
echo "$VERSION" > "$dest/.complete"
step "done"
