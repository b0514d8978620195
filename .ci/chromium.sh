#!/usr/bin/env bash
# Chromium for the HTML report tests (tests/doctor/test_html_browser.py), from the
# distribution's packages, like .ci/postgres.sh installs PostgreSQL.
#
#   bash .ci/chromium.sh install    # apt-get install chromium when no Chromium is on PATH
#
# The tests drive it headless over the DevTools pipe (no chromium-driver needed) with
# --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
# --disable-component-update --disable-sync and a fresh --user-data-dir.
set -euo pipefail

have_chromium() {
    command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 ||
        command -v google-chrome >/dev/null 2>&1
}

install_packages() {
    if have_chromium; then
        return 0
    fi
    echo "chromium.sh: installing Chromium from the distribution's packages" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq chromium >&2
}

case "${1:-}" in
install) install_packages ;;
*)
    echo "usage: bash .ci/chromium.sh install" >&2
    exit 2
    ;;
esac
