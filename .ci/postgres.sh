#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on a Unix socket under a temporary directory.
#
#   bash .ci/postgres.sh install           # the distribution's packages, when initdb is missing
#   eval "$(bash .ci/postgres.sh start)"   # exports SKILLRT_TEST_POSTGRES_URL, SKILLRT_PG_DIR
#   bash .ci/postgres.sh stop "$SKILLRT_PG_DIR"
#
# The failure tests also take the server down and up again, keeping its data:
#   bash .ci/postgres.sh restart DIR | down DIR | up DIR
#
# Installs the distribution's packages when initdb is missing (Debian/Ubuntu, as root).
# initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
# Only the socket is used (listen_addresses=''), so nothing listens on the network.
set -euo pipefail

pg_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        if [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
    done
    command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)" && return 0
    return 1
}

install_packages() {
    if ! pg_bin >/dev/null; then
        echo "postgres.sh: installing PostgreSQL from the distribution's packages" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq postgresql >&2
    fi
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

start() {
    install_packages
    local bin dir port
    bin=$(pg_bin)
    dir=$(mktemp -d /tmp/skillrt-pg.XXXXXX)
    port=${SKILLRT_PG_PORT:-$((20000 + RANDOM % 20000))}
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    chmod 700 "$dir"
    echo "port=$port" >"$dir/port"
    as_owner "$bin/initdb" -D "$dir/data" -U skillrt -A trust --no-sync -E UTF8 >/dev/null
    up "$dir"
    # The socket directory must be reachable by the (non-root) server user and by us.
    chmod 755 "$dir"
    echo "export SKILLRT_PG_DIR=$dir"
    echo "export SKILLRT_TEST_POSTGRES_URL='postgresql://skillrt@/postgres?host=$dir&port=$port'"
}

ctl() {
    local dir=$1
    shift
    as_owner "$(pg_bin)/pg_ctl" -D "$dir/data" -w -t 60 "$@" >/dev/null
}

up() {
    local dir=$1 port
    port=$(sed -n 's/^port=//p' "$dir/port")
    ctl "$dir" -l "$dir/server.log" \
        -o "-c listen_addresses='' -c unix_socket_directories=$dir -p $port" start
}

stop() {
    local dir=${1:-${SKILLRT_PG_DIR:-}}
    [ -n "$dir" ] && [ -d "$dir/data" ] || return 0
    local bin
    bin=$(pg_bin) || return 0
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}

case "${1:-}" in
    install) install_packages ;;
    start) start ;;
    stop) stop "${2:-}" ;;
    restart) ctl "$2" -m fast -l "$2/server.log" restart ;;
    down) ctl "$2" -m fast stop ;;
    up) up "$2" ;;
    *) echo "usage: postgres.sh install | start | stop DIR | restart DIR | down DIR | up DIR" >&2; exit 2 ;;
esac
