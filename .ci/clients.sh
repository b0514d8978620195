#!/usr/bin/env bash
# The coding-agent CLIs the real-client tests drive (tests/clients): Claude Code, Codex
# CLI and Gemini CLI from the npm registry, at the versions .ci/clients/package-lock.json
# pins (with their integrity hashes), installed into .ci/cache/clients like the other CI
# downloads. Node.js and npm come from the distribution's packages when missing.
#
#   bash .ci/clients.sh install     # npm ci, once per lock file; prints the bin folder
#
# The tests find the CLIs in .ci/cache/clients/node_modules/.bin (or SKILLRT_CLIENTS_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.ci/cache/clients

install_node() {
    if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
        return 0
    fi
    echo "clients.sh: installing Node.js from the distribution's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq nodejs npm >&2
}

install_clients() {
    install_node
    mkdir -p "$DEST"
    local want have
    want=$(sha256sum .ci/clients/package-lock.json | cut -d' ' -f1)
    have=$(cat "$DEST/.installed" 2>/dev/null || true)
    if [ "$want" != "$have" ] || [ ! -x "$DEST/node_modules/.bin/codex" ]; then
        cp .ci/clients/package.json .ci/clients/package-lock.json "$DEST/"
        (cd "$DEST" && npm ci --no-audit --no-fund --loglevel=error \
            --cache "$PWD/../npm" >&2)
        # Claude Code's postinstall puts its native binary in place of a stub; npm may
        # not have run install scripts (allowScripts), so run it here (it is idempotent).
        if ! "$DEST/node_modules/.bin/claude" --version >/dev/null 2>&1; then
            (cd "$DEST/node_modules/@anthropic-ai/claude-code" && node install.cjs >&2)
        fi
        echo "$want" >"$DEST/.installed"
    fi
    local bin="$DEST/node_modules/.bin"
    "$bin/claude" --version >&2
    "$bin/codex" --version >&2
    "$bin/gemini" --version >&2
    echo "$PWD/$bin"
}

case "${1:-}" in
install) install_clients ;;
*)
    echo "usage: bash .ci/clients.sh install" >&2
    exit 2
    ;;
esac
