#!/usr/bin/env bash
# Installs and starts or stops, on 127.0.0.1, the peers Tablebay is benchmarked against (benches/peers.py):
# SeaweedFS (its S3 gateway and its Iceberg REST catalog, one `weed server`) and Apache Iceberg's reference REST
# catalog server (RESTCatalogServer from the iceberg-open-api 1.10.1 test fixtures) on a JDBC SQLite catalog file.
# Benchmarks only: never part of scripts/test.sh or CI.
#
#   scripts/peers.sh install                      build `weed` (scripts/seaweedfs.sh build) and resolve the reference
#                                                 server's class path (Maven) if they are not cached; time each step
#   scripts/peers.sh start seaweedfs [fsync|default]
#                                                 start `weed server` with a fresh bucket, then set its write-fsync
#                                                 rule (`fs.configure -locationPrefix=/ -fsync=true|false -apply`
#                                                 through `weed shell`); prints `s3=URL iceberg=URL` as the only line
#   scripts/peers.sh start iceberg-rest           start the reference server; prints its URL as the only stdout line
#   scripts/peers.sh stop seaweedfs|iceberg-rest  stop it (SIGTERM, then SIGKILL after 10 s)
#   scripts/peers.sh pid seaweedfs|iceberg-rest   print the server's pid (for strace or CPU counts)
#
# Durability, named: SeaweedFS `default` writes without fsync (its default); `fsync` syncs each volume write (the
# needle data and the index) and the filer's metadata log (about 3 fsyncs per 4 KiB PUT, counted by benches/peers.py).
# The reference server writes metadata files through Hadoop's local file system without fsync and commits the catalog
# row in SQLite (rollback journal, synchronous=FULL: the row is synced, the metadata file it names is not).
#
# Caches: `weed` as scripts/seaweedfs.sh keeps it ($TABLEBAY_WEED_CACHE, default $HOME/.cache/tablebay-seaweedfs); the
# jars in ~/.m2 (MAVEN_REPO_LOCAL moves it) and copied, with the compiled launcher, to $TABLEBAY_PEERS_CACHE (default
# $HOME/.cache/tablebay-peers)/iceberg-rest, re-resolved when benches/peers/pom.xml or the launcher changes.
#
# Environment: TABLEBAY_PEERS_DIR (default $HOME/.cache/tablebay-bench/peers): each peer's data, log and pid file
# (seaweedfs/, iceberg-rest/), on the disk the benchmark measures; TABLEBAY_WEED_PORT (default 17333: S3; master,
# volume and filer take the next three ports, Iceberg REST the one after), TABLEBAY_WEED_ACCESS_KEY /
# TABLEBAY_WEED_SECRET_KEY (passed to scripts/seaweedfs.sh); TABLEBAY_ICEBERG_REST_PORT (default 17181).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers_src="$repo_root/benches/peers"
CACHE="${TABLEBAY_PEERS_CACHE:-$HOME/.cache/tablebay-peers}"
RUN="${TABLEBAY_PEERS_DIR:-$HOME/.cache/tablebay-bench/peers}"
REST_HOME="$CACHE/iceberg-rest"
REST_DIR="$RUN/iceberg-rest"
REST_PORT="${TABLEBAY_ICEBERG_REST_PORT:-17181}"
export TABLEBAY_WEED_DIR="$RUN/seaweedfs"
# Fixed ports below Linux's ephemeral range (32768–60999): a port in it can be held by any outgoing connection (or
# its TIME_WAIT) of the load generators, and weed exits when one of its listeners cannot bind. gRPC ports are +10000;
# 17333-17337 and 27333-27336 also stay clear of the ranges the cluster harness draws from (tablebay_test/cluster.py).
export TABLEBAY_WEED_PORT="${TABLEBAY_WEED_PORT:-17333}"
# Large volumes: the benchmark's 64 MiB objects would otherwise fill one 64 MiB volume each (seaweedfs.sh's default
# is small for its fault tests); 1 GiB keeps volume growth out of the measured cells.
export TABLEBAY_WEED_VOLUME_MB="${TABLEBAY_WEED_VOLUME_MB:-1024}"

# Everything but the final answer goes to stderr; fd 3 is the real stdout.
exec 3>&1 1>&2

log() { printf 'peers.sh: %s\n' "$*"; }
die() { log "error: $*"; exit 1; }

maven_who=peers
# shellcheck source=lib/maven.sh
source "$repo_root/scripts/lib/maven.sh"

weed_bin() { "$repo_root/scripts/seaweedfs.sh" build 3>&1 | tail -n 1; }

# The reference server's class path and launcher, resolved and compiled once per change of their sources.
install_rest() {
    local stamp="$REST_HOME/.sources.sha256" want start=$SECONDS
    want="$(cat "$peers_src/pom.xml" "$peers_src/LoopbackRESTCatalogServer.java" | sha256sum | cut -d' ' -f1)"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        return
    fi
    jvm_tools
    log "resolving the Iceberg reference REST server's class path with Maven (cached in ~/.m2)"
    rm -rf "$REST_HOME"
    mkdir -p "$REST_HOME/classes"
    maven "$peers_src" dependency:copy-dependencies -DoutputDirectory="$REST_HOME/lib"
    javac -d "$REST_HOME/classes" -cp "$REST_HOME/lib/*" "$peers_src/LoopbackRESTCatalogServer.java"
    echo "$want" > "$stamp"
    log "iceberg-rest: class path resolved and launcher compiled in $((SECONDS - start)) s"
}

install() {
    local start=$SECONDS
    weed_bin > /dev/null
    log "seaweedfs: weed ready after $((SECONDS - start)) s"
    start=$SECONDS
    install_rest
    log "iceberg-rest: ready after $((SECONDS - start)) s"
}

# True while `pid` exists and is not a zombie.
alive() {
    local state
    state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true)"
    [[ -n "$state" && "$state" != Z ]]
}

start_seaweedfs() {
    local mode="${1:-default}" fsync weed master filer s3
    case "$mode" in
        fsync) fsync=true ;;
        default) fsync=false ;;
        *) die "seaweedfs durability must be fsync or default, not '$mode'" ;;
    esac
    weed="$(weed_bin)"
    s3="$("$repo_root/scripts/seaweedfs.sh" start 3>&1 | tail -n 1)"
    master=$((TABLEBAY_WEED_PORT + 1))
    filer=$((TABLEBAY_WEED_PORT + 3))
    # The filer's path rule decides whether the volume server syncs a write (`?fsync=true` on the upload); `/` covers
    # the S3 buckets (/buckets) and the table buckets alike. Set it explicitly both ways, so a reused data dir
    # cannot carry the other mode.
    log "seaweedfs: fs.configure -locationPrefix=/ -fsync=$fsync"
    (cd "$TABLEBAY_WEED_DIR" && echo "fs.configure -locationPrefix=/ -fsync=$fsync -apply" \
        | "$weed" shell -master="127.0.0.1:$master" -filer="127.0.0.1:$filer" > "$TABLEBAY_WEED_DIR/fs-configure.txt" 2>&1) \
        || { cat "$TABLEBAY_WEED_DIR/fs-configure.txt"; die "weed shell fs.configure failed"; }
    grep -q "\"fsync\": *$fsync" "$TABLEBAY_WEED_DIR/fs-configure.txt" \
        || { cat "$TABLEBAY_WEED_DIR/fs-configure.txt"; die "fs.configure did not report fsync=$fsync"; }
    echo "$mode" > "$TABLEBAY_WEED_DIR/durability"
    echo "s3=$s3 iceberg=http://127.0.0.1:$((TABLEBAY_WEED_PORT + 4))" >&3
}

start_rest() {
    install_rest
    mkdir -p "$REST_DIR/warehouse"
    if [[ -f "$REST_DIR/pid" ]] && alive "$(cat "$REST_DIR/pid")"; then
        log "iceberg-rest already running (pid $(cat "$REST_DIR/pid"))"
        echo "http://127.0.0.1:$REST_PORT" >&3
        return
    fi
    log "starting the Iceberg reference REST server on 127.0.0.1:$REST_PORT (log in $REST_DIR/server.log)"
    # RCKUtils.environmentCatalogConfig maps CATALOG_* to catalog properties (CATALOG_REST_PORT → rest.port).
    CATALOG_URI="jdbc:sqlite:file:$REST_DIR/catalog.db" CATALOG_WAREHOUSE="$REST_DIR/warehouse" \
        CATALOG_REST_PORT="$REST_PORT" \
        setsid java -Xmx2g -cp "$REST_HOME/classes:$REST_HOME/lib/*" org.apache.iceberg.rest.LoopbackRESTCatalogServer \
        >> "$REST_DIR/server.log" 2>&1 < /dev/null 3>&- &
    echo $! > "$REST_DIR/pid"
    local deadline=$((SECONDS + 90))
    until curl -sf -o /dev/null "http://127.0.0.1:$REST_PORT/v1/config"; do
        alive "$(cat "$REST_DIR/pid")" || { tail -n 40 "$REST_DIR/server.log"; die "the reference server exited"; }
        ((SECONDS < deadline)) || { tail -n 40 "$REST_DIR/server.log"; die "the reference server not ready after 90 s"; }
        sleep 0.3
    done
    echo "http://127.0.0.1:$REST_PORT" >&3
}

stop_rest() {
    local pid
    [[ -f "$REST_DIR/pid" ]] || { log "iceberg-rest not running"; return; }
    pid="$(cat "$REST_DIR/pid")"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while alive "$pid"; do
        if ((SECONDS >= deadline)); then
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        fi
        sleep 0.1
    done
    rm -f "$REST_DIR/pid"
}

peer_pid() {
    case "$1" in
        seaweedfs) cat "$TABLEBAY_WEED_DIR/weed.pid" >&3 ;;
        iceberg-rest) cat "$REST_DIR/pid" >&3 ;;
        *) die "unknown peer '$1' (seaweedfs, iceberg-rest)" ;;
    esac
}

case "${1:-} ${2:-}" in
    "install "*) install ;;
    "start seaweedfs") start_seaweedfs "${3:-default}" ;;
    "start iceberg-rest") start_rest ;;
    "stop seaweedfs") "$repo_root/scripts/seaweedfs.sh" stop ;;
    "stop iceberg-rest") stop_rest ;;
    "pid seaweedfs" | "pid iceberg-rest") peer_pid "$2" ;;
    *) die "usage: $0 install | start seaweedfs [fsync|default] | start iceberg-rest | stop PEER | pid PEER" ;;
esac
