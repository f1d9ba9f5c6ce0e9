#!/usr/bin/env bash
# Builds SeaweedFS's `weed` once and starts or stops a single-process SeaweedFS (master, volume, filer and S3
# gateway in one `weed server -s3`) on loopback: the third-party S3 store the scale-out tests use as Tablebay's
# blob backend.
#
#   scripts/seaweedfs.sh build    build `weed` from the Go module proxy if it is not cached yet; print its path
#   scripts/seaweedfs.sh start    build if needed, start the server, create the bucket, and print the S3 endpoint
#                                 (http://127.0.0.1:<port>) as the only stdout line
#   scripts/seaweedfs.sh stop     stop it (SIGTERM, then SIGKILL after 10 s)
#   scripts/seaweedfs.sh kill     stop it with SIGKILL at once (a crash, for fault tests)
#   scripts/seaweedfs.sh status   say whether it runs (stderr; exit status 0 when running)
#
# The build: `go install` refuses this module (its go.mod has a replace directive), so the script downloads the
# pinned module with `go mod download` and runs `go build ./weed` in a copy of the module directory. The binary
# lands in $TABLEBAY_WEED_CACHE/<version>/weed and is reused (about 10 minutes on 2 cores from an empty cache).
#
# Environment: GO (default /usr/local/go/bin/go, else `go` on PATH); GOPATH/GOMODCACHE as usual;
# TABLEBAY_WEED_CACHE (default $HOME/.cache/tablebay-seaweedfs); TABLEBAY_WEED_DIR (default
# $TABLEBAY_WEED_CACHE/run) holds data/, weed.log, weed.pid and s3.json; TABLEBAY_WEED_PORT (default 58333:
# the S3 port; the master, volume and filer take the next ports, the Iceberg REST catalog the one after (S3 port
# + 4), and each gRPC port is its HTTP port + 10000; the Lance port is off);
# TABLEBAY_WEED_BUCKET (default tablebay), TABLEBAY_WEED_ACCESS_KEY / TABLEBAY_WEED_SECRET_KEY (default
# weedtestkey / weedtestsecret): the static S3 credentials the server accepts, with admin rights;
# TABLEBAY_WEED_VOLUME_MB (default 64): the volume size limit (small, so the fault tests spread over volumes).
set -euo pipefail

WEED_MODULE=github.com/seaweedfs/seaweedfs
WEED_VERSION=v0.0.0-20261109003541-7506e5f91cd6
CACHE="${TABLEBAY_WEED_CACHE:-$HOME/.cache/tablebay-seaweedfs}"
BIN_DIR="$CACHE/$WEED_VERSION"
WEED="$BIN_DIR/weed"
RUN_DIR="${TABLEBAY_WEED_DIR:-$CACHE/run}"
PORT="${TABLEBAY_WEED_PORT:-58333}"
BUCKET="${TABLEBAY_WEED_BUCKET:-tablebay}"
ACCESS_KEY="${TABLEBAY_WEED_ACCESS_KEY:-weedtestkey}"
SECRET_KEY="${TABLEBAY_WEED_SECRET_KEY:-weedtestsecret}"
VOLUME_MB="${TABLEBAY_WEED_VOLUME_MB:-64}"
PID_FILE="$RUN_DIR/weed.pid"
LOG="$RUN_DIR/weed.log"

# Everything but the final answer goes to stderr; fd 3 is the real stdout.
exec 3>&1 1>&2

log() { printf 'seaweedfs.sh: %s\n' "$*"; }
die() { log "error: $*"; exit 1; }

find_go() {
    if [[ -n "${GO:-}" ]]; then echo "$GO"; return; fi
    if [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go; return; fi
    command -v go || die "no Go toolchain (set GO=/path/to/go)"
}

build() {
    if [[ -x "$WEED" ]]; then
        return
    fi
    local go json dir work start=$SECONDS
    go="$(find_go)"
    mkdir -p "$BIN_DIR"
    log "building weed $WEED_VERSION with $("$go" version) (once; cached in $BIN_DIR)"
    json="$("$go" mod download -json "$WEED_MODULE@$WEED_VERSION")" || die "go mod download $WEED_MODULE failed"
    dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
    [[ -d "$dir" ]] || die "go mod download gave no module directory: $json"
    # The module cache is read-only; build in a writable copy (go may touch go.sum).
    work="$(mktemp -d "$BIN_DIR/src.XXXXXX")"
    cp -r "$dir/." "$work"
    chmod -R u+w "$work"
    (cd "$work" && GOCACHE="$CACHE/gocache" GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 \
        "$go" build -trimpath -ldflags=-s -o "$WEED.tmp" ./weed) || { rm -rf "$work"; die "go build ./weed failed"; }
    rm -rf "$work"
    mv "$WEED.tmp" "$WEED"
    # The build cache (about 2 GB) serves no later start: only the binary is reused.
    rm -rf "$CACHE/gocache"
    log "built $WEED in $((SECONDS - start)) s"
}

pid_running() {
    [[ -f "$PID_FILE" ]] && alive "$(cat "$PID_FILE")"
}

endpoint() { echo "http://127.0.0.1:$PORT"; }

start() {
    build
    mkdir -p "$RUN_DIR/data"
    if pid_running; then
        log "already running (pid $(cat "$PID_FILE"))"
        endpoint >&3
        return
    fi
    cat >"$RUN_DIR/s3.json" <<EOF
{"identities": [{"name": "tablebay", "credentials": [{"accessKey": "$ACCESS_KEY", "secretKey": "$SECRET_KEY"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
EOF
    local master=$((PORT + 1)) volume=$((PORT + 2)) filer=$((PORT + 3))
    log "starting weed server on 127.0.0.1 (s3 $PORT, master $master, volume $volume, filer $filer), log in $LOG"
    # setsid: the server outlives this script and a later `kill` reaches the whole process group.
    setsid "$WEED" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$RUN_DIR/data" \
        -master.port="$master" -master.port.grpc=$((master + 10000)) \
        -master.volumeSizeLimitMB="$VOLUME_MB" -master.telemetry=false \
        -volume.port="$volume" -volume.port.grpc=$((volume + 10000)) -volume.max=0 \
        -filer -filer.port="$filer" -filer.port.grpc=$((filer + 10000)) \
        -s3 -s3.port="$PORT" -s3.port.grpc=$((PORT + 10000)) -s3.config="$RUN_DIR/s3.json" \
        -s3.port.iceberg=$((PORT + 4)) -s3.port.lance=0 \
        >>"$LOG" 2>&1 </dev/null 3>&- &
    echo $! >"$PID_FILE"
    wait_ready_bucket
    endpoint >&3
}

# Waits for the gateway, creates the bucket through it (signed with the static key, via curl's SigV4), and
# waits until a write succeeds.
wait_ready_bucket() {
    local deadline=$((SECONDS + 90)) code
    while true; do
        code="$(curl -s -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
            --user "$ACCESS_KEY:$SECRET_KEY" "$(endpoint)/$BUCKET" || true)"
        # 200 created; 409 BucketAlreadyOwnedByYou after a restart on the same data.
        if [[ "$code" == 200 || "$code" == 409 ]]; then
            # Ready means writable: after a restart the gateway lists before the volume server takes writes.
            code="$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary ready --max-time 5 \
                -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
                --aws-sigv4 "aws:amz:us-east-1:s3" --user "$ACCESS_KEY:$SECRET_KEY" \
                "$(endpoint)/$BUCKET/.ready-probe" || true)"
            [[ "$code" == 200 ]] && return 0
        fi
        pid_running || { tail -n 40 "$LOG" >&2 || true; die "weed exited during start-up (log: $LOG)"; }
        ((SECONDS < deadline)) || { tail -n 40 "$LOG" >&2 || true; die "weed not ready after 90 s (last status $code; log: $LOG)"; }
        sleep 0.3
    done
}

# True while `pid` exists and is not a zombie (the server is started detached; whoever adopts it reaps it late).
alive() {
    local state
    state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true)"
    [[ -n "$state" && "$state" != Z ]]
}

stop_with() {
    local signal="$1" pid
    if ! pid_running; then
        log "not running"
        rm -f "$PID_FILE"
        return
    fi
    pid="$(cat "$PID_FILE")"
    kill -"$signal" -- "-$pid" 2>/dev/null || kill -"$signal" "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 10)) killed=""
    while alive "$pid"; do
        if ((SECONDS >= deadline)) && [[ -z "$killed" ]]; then
            log "weed (pid $pid) did not stop after 10 s; killing it"
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
            killed=1
        fi
        sleep 0.1
    done
    rm -f "$PID_FILE"
}

status() {
    if pid_running; then
        log "running (pid $(cat "$PID_FILE"), $(endpoint))"
    else
        log "not running"
        return 1
    fi
}

case "${1:-}" in
    build) build; printf '%s\n' "$WEED" >&3 ;;
    start) start ;;
    stop) stop_with TERM ;;
    kill) stop_with KILL ;;
    status) status ;;
    *) die "usage: $0 build|start|stop|kill|status" ;;
esac
