#!/usr/bin/env bash
# Runs Iceberg's REST Compatibility Kit (Java, jars from Maven Central) against a fresh Tablebay server and
# prints one line per test, the reason of every test that did not pass, and a summary.
#
#   scripts/rck.sh                     both test classes (catalog + views)
#   scripts/rck.sh --only catalog      RESTCompatibilityKitCatalogTests only (also: --only views)
#   scripts/rck.sh --timeout 300       JVM wall-clock limit in seconds (default 540)
#
# Needs java (17+) and mvn (installed when missing and root: scripts/lib/maven.sh). The jars are resolved by
# `mvn dependency:copy-dependencies` from clients/jvm-rck/pom.xml (cached in ~/.m2; copied to
# clients/jvm-rck/target/lib once per pom change).
# Environment: TABLEBAY_BIN (default $CARGO_TARGET_DIR/debug/tablebay, built first), TABLEBAY_VENV.
# Report: clients/jvm-rck/target/rck-report.md; console output: clients/jvm-rck/target/rck-console.log.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tablebay-target}"
export TABLEBAY_BIN="${TABLEBAY_BIN:-$CARGO_TARGET_DIR/debug/tablebay}"
rck_dir="$repo_root/clients/jvm-rck"

maven_who=rck
# shellcheck source=lib/maven.sh
source "$repo_root/scripts/lib/maven.sh"
jvm_tools

# The class path: re-resolved only when pom.xml changes.
stamp="$rck_dir/target/lib/.pom.sha256"
want="$(sha256sum "$rck_dir/pom.xml" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "rck: resolving the RCK class path with Maven (cached in ~/.m2)"
    rm -rf "$rck_dir/target/lib"
    maven "$rck_dir" dependency:copy-dependencies -DoutputDirectory="$rck_dir/target/lib"
    echo "$want" > "$stamp"
fi

# This tree's binary, unless one is named (the harness refuses one built from other sources: tablebay_test/binary.py).
if [[ "$TABLEBAY_BIN" == "$CARGO_TARGET_DIR/debug/tablebay" ]]; then
    cargo build -p tablebay
fi

venv="$(scripts/python-env.sh | tail -n 1)"
exec "$venv/bin/python" "$rck_dir/run_rck.py" "$@"
