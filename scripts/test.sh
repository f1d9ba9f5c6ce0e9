#!/usr/bin/env bash
# The project's test command: runs every test stage and prints a summary; exits non-zero if any failed.
#
#   scripts/test.sh               all stages, in order
#   scripts/test.sh STAGE...      these, after the set-up stages they need (e.g. `scripts/test.sh rck` runs
#                                 cargo-build, python-env and jvm-tools first): each works alone on a fresh machine
#   scripts/test.sh --list        the stages and what each needs
#
# Stages: postgres (scripts/postgres.sh start → TABLEBAY_TEST_POSTGRES_URL), cargo-build, cargo-test (includes
# iceberg-rust's RestCatalog in crates/tablebay/tests/it/iceberg_clients_rust.rs; always with
# TABLEBAY_TEST_POSTGRES_URL, so the PostgreSQL variants run and fail when they cannot), python-env
# (scripts/python-env.sh), python-clients (pytest clients/python against the built binary: boto3, the AWS CLI,
# PyIceberg, DuckDB — all but the S3 data-plane files and the stages' own files), python-s3
# (clients/python/test_s3_*.py: boto3, raw SigV4, pyarrow, aws s3 on the local and the remote backend), s3-crash
# (kill -9 during large uploads; a power cut on a loop device),
# jvm-tools (scripts/jvm-tools.sh: a JDK and Maven, installed when missing), jvm-build (scripts/jvm-build.sh:
# clients/jvm with Maven), jvm-s3 (the AWS SDK for Java v2 check, through pytest), kafka-connect
# (scripts/jvm-kafka-connect.sh: a KRaft broker, a Connect worker and the Iceberg sink writing into Tablebay,
# exactly once across a kill -9), spark and flink (the pipeline scenarios of clients/jvm/spark and
# clients/jvm/flink: Spark 3.5 and Flink 1.20 with Iceberg 1.10.1's REST catalog, SigV4 and S3FileIO; jars by
# scripts/jvm-pipeline-build.sh), rck (Iceberg's REST Compatibility Kit, of Iceberg 1.10.1 and 1.11.0, by
# scripts/rck.sh; every failure must be listed with its reason in clients/jvm-rck/expected-failures-<version>.txt),
# migration (clients/python/test_migration.py: table migration from Iceberg's RESTCatalogServer and from SeaweedFS),
# console (clients/python/test_console.py: the web console in Debian's headless chromium through Selenium;
# scripts/browser.sh installs the browser), chaos
# (clients/python/test_chaos.py: three instances on a PostgreSQL of their own and SeaweedFS behind HAProxy, under
# kill -9 and dependency restarts, about 2.5 minutes of load; scripts/seaweedfs.sh builds `weed` once and
# scripts/haproxy.sh installs haproxy when missing).
# A stage whose prerequisite failed is skipped. To add one: write `stage_NAME`, add it to STAGES with every stage
# it needs (the set-up it relies on, not just what happens to run before it).
#
# Environment: CARGO_TARGET_DIR (default $HOME/.cache/tablebay-target); TABLEBAY_TEST_POSTGRES_URL (if set,
# that PostgreSQL is used and none is started); TABLEBAY_BIN (default $CARGO_TARGET_DIR/debug/tablebay; the
# harnesses refuse a binary not built from this tree unless TABLEBAY_BIN_UNCHECKED=1);
# TABLEBAY_VENV (default $HOME/.cache/tablebay-venv); PYTEST_ARGS (extra pytest arguments);
# TABLEBAY_TEST_LARGE_MIB (size of the `aws s3 cp` file, default 200).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tablebay-target}"

# name | function | stages that must have passed first (space-separated; run first when a subset is asked for)
STAGES=(
    "postgres|stage_postgres|"
    "cargo-build|stage_cargo_build|"
    "cargo-test|stage_cargo_test|postgres cargo-build"
    "python-env|stage_python_env|"
    "python-clients|stage_python_clients|cargo-build python-env"
    "python-s3|stage_python_s3|cargo-build python-env"
    "s3-crash|stage_s3_crash|cargo-build python-env"
    "jvm-tools|stage_jvm_tools|"
    "jvm-build|stage_jvm_build|jvm-tools"
    "kafka-connect|stage_kafka_connect|cargo-build python-env jvm-tools"
    "jvm-s3|stage_jvm_s3|cargo-build python-env jvm-build"
    "spark|stage_spark|cargo-build python-env jvm-tools"
    "flink|stage_flink|cargo-build python-env jvm-tools"
    "rck|stage_rck|cargo-build python-env jvm-tools"
    "console|stage_console|cargo-build python-env"
    "chaos|stage_chaos|cargo-build python-env postgres"
    "migration|stage_migration|cargo-build python-env jvm-tools"
)

# Stages run in subshells (so `set -e` holds inside them); one that must hand a variable to later stages
# calls `stage_export NAME VALUE`, which records it here for the parent to source.
STATE_FILE="$(mktemp "${TMPDIR:-/tmp}/tablebay-test-state.XXXXXX")"
trap 'rm -f "$STATE_FILE"' EXIT
stage_export() {
    export "$1=$2"
    printf 'export %s=%q\n' "$1" "$2" >> "$STATE_FILE"
}

stage_postgres() {
    if [[ -n "${TABLEBAY_TEST_POSTGRES_URL:-}" ]]; then
        echo "using the given TABLEBAY_TEST_POSTGRES_URL=$TABLEBAY_TEST_POSTGRES_URL"
        return 0
    fi
    if [[ ! -f scripts/postgres.sh ]]; then
        echo "scripts/postgres.sh is missing: it starts the PostgreSQL the Rust tests use" >&2
        return 1
    fi
    local url
    url="$(bash scripts/postgres.sh start)"
    if [[ "$url" != postgres://* ]]; then
        echo "scripts/postgres.sh start printed '$url', not a postgres:// URL" >&2
        return 1
    fi
    echo "PostgreSQL at $url"
    stage_export TABLEBAY_TEST_POSTGRES_URL "$url"
}

stage_cargo_build() {
    cargo build --workspace
}

stage_cargo_test() {
    # The postgres stage set it: with it, a PostgreSQL variant that cannot run fails instead of being skipped.
    if [[ -z "${TABLEBAY_TEST_POSTGRES_URL:-}" ]]; then
        echo "TABLEBAY_TEST_POSTGRES_URL is not set (the postgres stage sets it)" >&2
        return 1
    fi
    echo "cargo test with TABLEBAY_TEST_POSTGRES_URL=$TABLEBAY_TEST_POSTGRES_URL"
    # --no-fail-fast: one run reports every failing test binary, not just the first.
    cargo test --workspace --no-fail-fast
}

stage_python_env() {
    local venv
    venv="$(scripts/python-env.sh | tail -n 1)"
    stage_export TABLEBAY_VENV "$venv"
}

run_pytest() {
    local venv="${TABLEBAY_VENV:-$HOME/.cache/tablebay-venv}"
    export TABLEBAY_BIN="${TABLEBAY_BIN:-$CARGO_TARGET_DIR/debug/tablebay}"
    echo "pytest $* with TABLEBAY_BIN=$TABLEBAY_BIN"
    # shellcheck disable=SC2086 # PYTEST_ARGS is a list of words on purpose
    "$venv/bin/python" -m pytest -q "$@" ${PYTEST_ARGS:-}
}

stage_python_clients() {
    run_pytest clients/python --ignore-glob='*/test_s3_*.py' --ignore=clients/python/test_power_loss.py \
        --ignore=clients/python/test_console.py --ignore=clients/python/test_chaos.py \
        --ignore=clients/python/test_migration.py
}

# Table migration from real sources: Iceberg's RESTCatalogServer (Java; jars by scripts/rest-source.sh) and a
# table on SeaweedFS (scripts/seaweedfs.sh; skipped with the reason when `weed` cannot be built). It runs after
# chaos, which builds `weed` first on a fresh machine.
stage_migration() {
    scripts/rest-source.sh classpath >/dev/null
    run_pytest clients/python/test_migration.py
}

# The web console in a real browser: Debian's chromium and chromium-driver (scripts/browser.sh installs them when
# missing), Selenium from the venv. Screenshots land in $TABLEBAY_TEST_ARTIFACTS (default test-artifacts/console).
stage_console() {
    bash scripts/browser.sh >/dev/null
    run_pytest clients/python/test_console.py
}

# The S3 data plane's client files, but the crash and JVM ones (stages of their own).
stage_python_s3() {
    local files=()
    for f in clients/python/test_s3_*.py; do
        case "$f" in */test_s3_crash.py|*/test_s3_jvm.py) ;; *) files+=("$f") ;; esac
    done
    run_pytest "${files[@]}"
}

# Crashes: kill -9 in the middle of uploads, and a power cut that loses the page cache (root, loop device).
stage_s3_crash() {
    run_pytest clients/python/test_s3_crash.py clients/python/test_power_loss.py
}

stage_jvm_tools() {
    scripts/jvm-tools.sh
}

stage_jvm_build() {
    local jar
    jar="$(scripts/jvm-build.sh | tail -n 1)"
    stage_export TABLEBAY_JVM_JAR "$jar"
}

stage_kafka_connect() {
    export TABLEBAY_BIN="${TABLEBAY_BIN:-$CARGO_TARGET_DIR/debug/tablebay}"
    scripts/jvm-kafka-connect.sh
}

stage_jvm_s3() {
    run_pytest clients/python/test_s3_jvm.py
}

# The pipeline scenarios: each starts its own server, prints a line per step and `N passed, M failed`.
run_pipeline() {
    local venv="${TABLEBAY_VENV:-$HOME/.cache/tablebay-venv}"
    export TABLEBAY_BIN="${TABLEBAY_BIN:-$CARGO_TARGET_DIR/debug/tablebay}"
    "$venv/bin/python" "clients/jvm/$1/${2:-run_scenario.py}"
}

stage_spark() {
    run_pipeline spark
    # Compaction of a table whose delete files Spark wrote (docs/maintenance.md).
    run_pipeline spark run_compaction.py
}

stage_flink() {
    run_pipeline flink
}

# The kits of these Iceberg releases, one after the other (every one runs even if an earlier one failed).
RCK_ICEBERG_VERSIONS=(1.10.1 1.11.0)
stage_rck() {
    export TABLEBAY_BIN="${TABLEBAY_BIN:-$CARGO_TARGET_DIR/debug/tablebay}"
    local version rc=0
    for version in "${RCK_ICEBERG_VERSIONS[@]}"; do
        # Bounded: each kit's JVM is killed after 300 s (one took 116-148 s on 2 cores shared with other builds).
        scripts/rck.sh --iceberg-version "$version" --timeout 300 \
            --expected-failures "clients/jvm-rck/expected-failures-$version.txt" || rc=1
    done
    return "$rc"
}

# The scale-out scenario (docs/deployment.md). Its own PostgreSQL (it restarts it), so the postgres stage is only
# the proof that the server package is installed; `weed` and haproxy are set up first, outside pytest's timing.
stage_chaos() {
    scripts/seaweedfs.sh build
    scripts/haproxy.sh install
    run_pytest -s clients/python/test_chaos.py
}

declare -A RESULT=() SECONDS_TAKEN=() REASON=()
ORDER=()

run_stage() {
    local name="$1" fn="$2" needs="$3" dep
    ORDER+=("$name")
    for dep in $needs; do
        if [[ -n "${RESULT[$dep]:-}" && "${RESULT[$dep]}" != passed ]]; then
            RESULT[$name]=skipped
            REASON[$name]="$dep ${RESULT[$dep]}"
            printf '\n==> %s: skipped (%s)\n' "$name" "${REASON[$name]}"
            return 0
        fi
    done
    printf '\n==> %s\n' "$name"
    local start=$SECONDS rc
    set +e
    ( set -euo pipefail; "$fn" )
    rc=$?
    set -e
    # shellcheck disable=SC1090
    source "$STATE_FILE"
    SECONDS_TAKEN[$name]=$((SECONDS - start))
    if [[ $rc -eq 0 ]]; then
        RESULT[$name]=passed
    else
        RESULT[$name]=FAILED
        REASON[$name]="exit $rc"
    fi
    printf '==> %s: %s (%ss)\n' "$name" "${RESULT[$name]}" "${SECONDS_TAKEN[$name]}"
}

# The stage's entry: "name|function|needs".
stage_entry() {
    printf '%s\n' "${STAGES[@]}" | grep "^$1|"
}

# Adds NAME and, first, every stage it needs (transitively) to the associative array CHOSEN.
choose() {
    local name="$1" entry needs dep
    [[ -z "${CHOSEN[$name]:-}" ]] || return 0
    entry="$(stage_entry "$name")"
    IFS="|" read -r _ _ needs <<< "$entry"
    for dep in $needs; do
        choose "$dep"
    done
    CHOSEN[$name]=1
}

main() {
    local -a wanted=("$@")
    local entry name fn needs
    if [[ "${1:-}" == "--list" ]]; then
        for entry in "${STAGES[@]}"; do
            IFS='|' read -r name fn needs <<< "$entry"
            if [[ -n "$needs" ]]; then
                printf '%-16s needs: %s\n' "$name" "$needs"
            else
                echo "$name"
            fi
        done
        return 0
    fi
    for name in "${wanted[@]}"; do
        if ! stage_entry "$name" > /dev/null; then
            echo "scripts/test.sh: unknown stage '$name' (see --list)" >&2
            return 2
        fi
    done
    declare -gA CHOSEN=()
    if [[ ${#wanted[@]} -gt 0 ]]; then
        for name in "${wanted[@]}"; do
            choose "$name"
        done
    fi
    for entry in "${STAGES[@]}"; do
        IFS='|' read -r name fn needs <<< "$entry"
        if [[ ${#wanted[@]} -gt 0 && -z "${CHOSEN[$name]:-}" ]]; then
            continue
        fi
        run_stage "$name" "$fn" "$needs"
    done

    local failed=()
    printf '\n==> summary (CARGO_TARGET_DIR=%s)\n' "$CARGO_TARGET_DIR"
    for name in "${ORDER[@]}"; do
        printf '    %-16s %-8s %6s  %s\n' "$name" "${RESULT[$name]}" \
            "${SECONDS_TAKEN[$name]:+${SECONDS_TAKEN[$name]}s}" "${REASON[$name]:-}"
        [[ "${RESULT[$name]}" == passed ]] || failed+=("$name")
    done
    if [[ ${#failed[@]} -gt 0 ]]; then
        printf '==> FAILED: %s\n' "${failed[*]}"
        return 1
    fi
    printf '==> all %d stages passed\n' "${#ORDER[@]}"
}

main "$@"
