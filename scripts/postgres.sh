#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL server for Tablebay's tests.
#
#   scripts/postgres.sh start   install Debian's server if missing, create the cluster once, start it, and print
#                               its URL (postgres://tablebay@127.0.0.1:<port>/postgres) as the only stdout line
#   scripts/postgres.sh stop    stop it
#   scripts/postgres.sh status  say whether it runs (stderr; exit status 0 when running)
#
# Environment: TABLEBAY_PG_DIR (default $HOME/.cache/tablebay-pg) holds the cluster (data/) and its log
# (postgres.log); TABLEBAY_PG_PORT (default 55432). The server listens on 127.0.0.1 only, with trust
# authentication and no Unix socket, and runs with fsync off: it is for tests, never for data you keep.
# As root, the server runs as the `postgres` OS user (PostgreSQL refuses to run as root); otherwise as you.
set -euo pipefail

PG_DIR="${TABLEBAY_PG_DIR:-$HOME/.cache/tablebay-pg}"
PG_PORT="${TABLEBAY_PG_PORT:-55432}"
DATA="$PG_DIR/data"
LOG="$PG_DIR/postgres.log"
ROLE=tablebay
URL="postgres://$ROLE@127.0.0.1:$PG_PORT/postgres"

# Everything but the final URL goes to stderr; fd 3 is the real stdout.
exec 3>&1 1>&2

log() { printf 'postgres.sh: %s\n' "$*"; }
die() { log "error: $*"; exit 1; }

if [[ $EUID -eq 0 ]]; then
    SERVER_USER=postgres
else
    SERVER_USER="$(id -un)"
fi

# Runs a command as the server's OS user (from /, since that user may not be allowed into the current directory).
as_server() {
    if [[ $EUID -eq 0 ]]; then
        (cd / && runuser -u "$SERVER_USER" -- "$@")
    else
        "$@"
    fi
}

# The bin directory of the newest installed server, or of the cluster's own major version once it exists.
find_bindir() {
    local version
    if [[ -f "$DATA/PG_VERSION" ]]; then
        version="$(cat "$DATA/PG_VERSION")"
        if [[ -x "/usr/lib/postgresql/$version/bin/postgres" ]]; then
            echo "/usr/lib/postgresql/$version/bin"
            return
        fi
        die "the cluster in $DATA is PostgreSQL $version, which is not installed; remove $PG_DIR or install it"
    fi
    local newest
    newest="$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null | sort -V | tail -n 1 || true)"
    [[ -n "$newest" ]] && dirname "$newest"
}

install_server() {
    if [[ -n "$(find_bindir)" ]]; then
        return
    fi
    log "PostgreSQL server not found; installing Debian's postgresql package"
    local sudo=()
    if [[ $EUID -ne 0 ]]; then
        command -v sudo >/dev/null || die "PostgreSQL is not installed and this is not root; install 'postgresql'"
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends postgresql
    [[ -n "$(find_bindir)" ]] || die "apt-get installed postgresql but no /usr/lib/postgresql/*/bin/postgres appeared"
}

# The server user must reach $PG_DIR. Under root's home (mode 0700 on Debian) that means letting others
# traverse (x, not read) the ancestors that forbid it.
grant_traverse() {
    [[ $EUID -eq 0 ]] || return 0
    local dir="" part
    local -a parts
    IFS=/ read -r -a parts <<<"$(dirname "$PG_DIR")"
    # From / downwards: a directory is reachable only once all of its ancestors are.
    for part in "${parts[@]}"; do
        [[ -n "$part" ]] || continue
        dir="$dir/$part"
        if ! runuser -u "$SERVER_USER" -- test -x "$dir"; then
            log "granting other users traverse permission (o+x) on $dir so that $SERVER_USER can reach $PG_DIR"
            chmod o+x "$dir"
        fi
    done
}

init_cluster() {
    mkdir -p "$PG_DIR"
    if [[ $EUID -eq 0 ]]; then
        chown "$SERVER_USER:" "$PG_DIR"
        grant_traverse
    fi
    chmod 0700 "$PG_DIR"
    if [[ -f "$DATA/PG_VERSION" ]]; then
        return
    fi
    log "creating a cluster in $DATA"
    rm -rf "$DATA"
    as_server "$BINDIR/initdb" --pgdata="$DATA" --username=postgres --auth=trust --encoding=UTF8 \
        --locale=C.UTF-8 >&2
    # Later settings in postgresql.conf win; the port is passed on each start so a new TABLEBAY_PG_PORT applies.
    as_server tee -a "$DATA/postgresql.conf" >/dev/null <<'EOF'

# --- tablebay test server (scripts/postgres.sh) ---
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
# Throwaway data: trade durability for speed.
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
EOF
    as_server tee "$DATA/pg_hba.conf" >/dev/null <<'EOF'
# tablebay test server: trust on loopback TCP only (no Unix socket is opened).
host    all             all             127.0.0.1/32            trust
EOF
}

is_running() {
    [[ -f "$DATA/PG_VERSION" ]] && as_server "$BINDIR/pg_ctl" status --pgdata="$DATA" >/dev/null 2>&1
}

wait_ready() {
    local deadline=$((SECONDS + 60))
    until "$BINDIR/pg_isready" --quiet --host=127.0.0.1 --port="$PG_PORT" --dbname=postgres; do
        if ((SECONDS >= deadline)); then
            tail -n 30 "$LOG" >&2 || true
            die "server on 127.0.0.1:$PG_PORT not ready after 60 s (log: $LOG)"
        fi
        sleep 0.2
    done
}

psql_admin() {
    "$BINDIR/psql" --no-psqlrc --quiet --tuples-only --no-align --set=ON_ERROR_STOP=1 \
        --host=127.0.0.1 --port="$PG_PORT" --username=postgres --dbname=postgres "$@"
}

ensure_role() {
    if [[ "$(psql_admin --command="SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'")" != "1" ]]; then
        log "creating role $ROLE"
        psql_admin --command="CREATE ROLE $ROLE LOGIN SUPERUSER"
    fi
}

start() {
    install_server
    BINDIR="$(find_bindir)"
    init_cluster
    if is_running; then
        "$BINDIR/pg_isready" --quiet --host=127.0.0.1 --port="$PG_PORT" --dbname=postgres \
            || die "the cluster in $DATA runs, but not on port $PG_PORT; run '$0 stop' first"
    else
        log "starting PostgreSQL ($BINDIR) on 127.0.0.1:$PG_PORT, log in $LOG"
        as_server "$BINDIR/pg_ctl" start --pgdata="$DATA" --log="$LOG" --wait --timeout=60 \
            --options="-p $PG_PORT" >&2 3>&- || { tail -n 30 "$LOG" >&2 || true; die "pg_ctl start failed"; }
    fi
    wait_ready
    ensure_role
    printf '%s\n' "$URL" >&3
}

stop() {
    BINDIR="$(find_bindir || true)"
    if [[ -z "$BINDIR" ]] || ! is_running; then
        log "not running"
        return
    fi
    as_server "$BINDIR/pg_ctl" stop --pgdata="$DATA" --mode=fast --wait >&2
}

status() {
    BINDIR="$(find_bindir || true)"
    if [[ -n "$BINDIR" ]] && is_running; then
        log "running ($DATA)"
    else
        log "not running"
        return 1
    fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) die "usage: $0 start|stop|status" ;;
esac
