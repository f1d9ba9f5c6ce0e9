#!/usr/bin/env bash
# Runs HAProxy in front of several Tablebay instances: one frontend per Tablebay listener (the tables API and the
# S3 data plane), each balancing round-robin over every instance, with an HTTP health check on `/health` of the
# instance's tables listener deciding for both of its listeners.
#
#   scripts/haproxy.sh install                       install Debian's haproxy with apt-get when missing (quietly)
#   scripts/haproxy.sh start TABLES_PORT S3_PORT INSTANCE...
#                                                    write the config and start HAProxy on 127.0.0.1:TABLES_PORT and
#                                                    127.0.0.1:S3_PORT; each INSTANCE is TABLES_HOST:PORT,S3_HOST:PORT
#                                                    (e.g. 127.0.0.1:8181,127.0.0.1:9000); prints the two frontend
#                                                    URLs (tables, then S3) on stdout, one a line
#   scripts/haproxy.sh stop                          stop it
#   scripts/haproxy.sh status                        say whether it runs (stderr; exit status 0 when running)
#
# Environment: TABLEBAY_HAPROXY_DIR (default $HOME/.cache/tablebay-haproxy) holds haproxy.cfg, haproxy.pid and
# haproxy.log (one `TB <epoch s.ms> <frontend> <server> <status> <ms> <termination> <retry-after> <method> <uri>`
# line per request). The checks run every 500 ms (down after 2 failures, up after 2 successes), so a killed instance
# leaves the pool within about a second; a request that fails to connect is retried on another instance
# (`option redispatch`), but a request that reached an instance is never replayed by HAProxy.
set -euo pipefail

DIR="${TABLEBAY_HAPROXY_DIR:-$HOME/.cache/tablebay-haproxy}"
CFG="$DIR/haproxy.cfg"
PID_FILE="$DIR/haproxy.pid"
LOG="$DIR/haproxy.log"

exec 3>&1 1>&2

log() { printf 'haproxy.sh: %s\n' "$*"; }
die() { log "error: $*"; exit 1; }

install() {
    command -v haproxy >/dev/null && return 0
    [[ -x /usr/sbin/haproxy ]] && return 0
    local sudo=()
    if [[ $EUID -ne 0 ]]; then
        command -v sudo >/dev/null || die "haproxy is not installed and this is not root; install 'haproxy'"
        sudo=(sudo)
    fi
    log "installing Debian's haproxy with apt-get"
    # Another apt-get (a parallel set-up script) may hold the lock for a while: wait for it rather than fail.
    local wait=(-o DPkg::Lock::Timeout=300)
    local out
    out="$(mktemp)"
    if ! { "${sudo[@]}" apt-get "${wait[@]}" update -qq \
        && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get "${wait[@]}" install -y -qq \
            --no-install-recommends haproxy; } >"$out" 2>&1; then
        cat "$out" >&2
        rm -f "$out"
        die "apt-get could not install haproxy"
    fi
    rm -f "$out"
    # Debian starts the packaged service where an init system runs; ours is separate and the default one binds
    # nothing, but stop it anyway so it cannot take a port we want.
    if command -v systemctl >/dev/null && systemctl is-active --quiet haproxy 2>/dev/null; then
        "${sudo[@]}" systemctl stop haproxy || true
    fi
}

haproxy_bin() {
    command -v haproxy || echo /usr/sbin/haproxy
}

running() {
    [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null
}

write_config() {
    local tables_port="$1" s3_port="$2"
    shift 2
    local i=0 instance tables s3 tables_servers="" s3_servers=""
    for instance in "$@"; do
        i=$((i + 1))
        tables="${instance%%,*}"
        s3="${instance#*,}"
        [[ "$tables" == *:* && "$s3" == *:* && "$tables" != "$s3" ]] \
            || die "instance '$instance' is not TABLES_HOST:PORT,S3_HOST:PORT"
        tables_servers+="    server tb$i $tables check"$'\n'
        # The S3 listener has no /health of its own: it follows the same instance's tables check.
        s3_servers+="    server tb$i $s3 track tables/tb$i"$'\n'
    done
    ((i > 0)) || die "no instances given"
    mkdir -p "$DIR"
    cat >"$CFG" <<EOF
# Written by scripts/haproxy.sh: $i Tablebay instance(s) behind one address per listener.
global
    log stderr format raw local0 info
    maxconn 4096

defaults
    mode http
    log global
    option dontlognull
    # One line per request, for scripts: accept time (epoch seconds.milliseconds), frontend, server, status,
    # total ms, termination state (its first letter is '-' when the server answered; anything else means HAProxy
    # ended the request), the Retry-After header ('-' when absent), method and URI (path and query).
    log-format "TB %Ts.%ms %ft %s %ST %Ta %tsc %[capture.res.hdr(0)] %HM %HU"
    timeout connect 2s
    # Long enough for a large upload part or a slow commit; shorter than any client's stall timeout.
    timeout client 120s
    timeout server 120s
    timeout http-request 30s
    # Connection failures (an instance that just died) are retried once on another instance.
    retries 1
    option redispatch 1
    retry-on conn-failure empty-response

frontend tables_in
    bind 127.0.0.1:$tables_port
    declare capture response len 8
    http-response capture res.hdr(retry-after) id 0
    default_backend tables

frontend s3_in
    bind 127.0.0.1:$s3_port
    declare capture response len 8
    http-response capture res.hdr(retry-after) id 0
    # Large bodies stream through; HAProxy never buffers or replays them.
    default_backend s3

backend tables
    balance roundrobin
    option httpchk GET /health
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2
$tables_servers
backend s3
    balance roundrobin
$s3_servers
EOF
}

start() {
    [[ $# -ge 3 ]] || die "usage: $0 start TABLES_PORT S3_PORT TABLES_HOST:PORT,S3_HOST:PORT..."
    local tables_port="$1" s3_port="$2"
    install
    stop
    write_config "$@"
    "$(haproxy_bin)" -c -f "$CFG" >/dev/null || die "haproxy rejected $CFG"
    # In the foreground of its own session (not -D, which would close stderr): the request log goes to $LOG.
    setsid "$(haproxy_bin)" -f "$CFG" >>"$LOG" 2>&1 </dev/null 3>&- &
    echo $! >"$PID_FILE"
    local deadline=$((SECONDS + 20))
    until curl -s -o /dev/null "http://127.0.0.1:$tables_port/health"; do
        running || die "haproxy exited (log: $LOG)"
        ((SECONDS < deadline)) || die "haproxy on 127.0.0.1:$tables_port does not answer (log: $LOG)"
        sleep 0.1
    done
    printf 'http://127.0.0.1:%s\nhttp://127.0.0.1:%s\n' "$tables_port" "$s3_port" >&3
}

stop() {
    if ! running; then
        rm -f "$PID_FILE"
        return 0
    fi
    local pid
    pid="$(cat "$PID_FILE")"
    kill "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null; do
        if ((SECONDS >= deadline)); then
            kill -KILL "$pid" 2>/dev/null || true
        fi
        sleep 0.1
    done
    rm -f "$PID_FILE"
}

status() {
    if running; then
        log "running (pid $(cat "$PID_FILE"), config $CFG)"
    else
        log "not running"
        return 1
    fi
}

case "${1:-}" in
    install) install ;;
    start) shift; start "$@" ;;
    stop) stop ;;
    status) status ;;
    *) die "usage: $0 install|start TABLES_PORT S3_PORT INSTANCE...|stop|status" ;;
esac
