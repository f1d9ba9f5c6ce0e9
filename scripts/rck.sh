#!/usr/bin/env bash
# Runs Iceberg's REST Compatibility Kit (Java, jars from Maven Central) against a fresh Tablebay server and
# prints one line per test, the reason of every test that did not pass, and a summary.
#
#   scripts/rck.sh                     both test classes (catalog + views)
#   scripts/rck.sh --only catalog      RESTCompatibilityKitCatalogTests only (also: --only views)
#   scripts/rck.sh --timeout 300       JVM wall-clock limit in seconds (default 540)
#
# Needs java (17+) and mvn. The jars are resolved by `mvn dependency:copy-dependencies` from
# clients/jvm-rck/pom.xml (cached in ~/.m2; copied to clients/jvm-rck/target/lib once per pom change).
# Environment: TABLEBAY_BIN (default $CARGO_TARGET_DIR/debug/tablebay, built if missing), TABLEBAY_VENV.
# Report: clients/jvm-rck/target/rck-report.md; console output: clients/jvm-rck/target/rck-console.log.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tablebay-target}"
export TABLEBAY_BIN="${TABLEBAY_BIN:-$CARGO_TARGET_DIR/debug/tablebay}"
rck_dir="$repo_root/clients/jvm-rck"

for tool in java mvn; do
    if ! command -v "$tool" > /dev/null; then
        echo "rck: $tool not found (Debian: apt-get install -y default-jdk-headless maven)" >&2
        exit 2
    fi
done

# The class path: re-resolved only when pom.xml changes.
stamp="$rck_dir/target/lib/.pom.sha256"
want="$(sha256sum "$rck_dir/pom.xml" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "rck: resolving the RCK class path with Maven (cached in ~/.m2)"
    rm -rf "$rck_dir/target/lib"
    mvn -q -B -f "$rck_dir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$rck_dir/target/lib"
    echo "$want" > "$stamp"
fi

if [[ ! -x "$TABLEBAY_BIN" ]]; then
    echo "rck: building $TABLEBAY_BIN"
    cargo build -p tablebay
fi

venv="$(scripts/python-env.sh | tail -n 1)"
exec "$venv/bin/python" "$rck_dir/run_rck.py" "$@"
