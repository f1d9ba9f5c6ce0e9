#!/usr/bin/env bash
# Runs Iceberg's REST Compatibility Kit (Java, jars from Maven Central) against a fresh Tablebay server and
# prints one line per test, the reason of every test that did not pass, and a summary.
#
#   scripts/rck.sh                     both test classes (catalog + views)
#   scripts/rck.sh --only catalog      RESTCompatibilityKitCatalogTests only (also: --only views)
#   scripts/rck.sh --timeout 300       JVM wall-clock limit in seconds (default 540)
#   scripts/rck.sh --iceberg-version 1.11.0   the kit of that Iceberg release (default: the pom's, 1.10.1)
#   scripts/rck.sh --expected-failures clients/jvm-rck/expected-failures-1.10.1.txt   accept the listed failures
#
# Needs java (17+) and mvn (installed when missing and root: scripts/lib/maven.sh). The jars are resolved by
# `mvn dependency:copy-dependencies -Diceberg.version=V` from clients/jvm-rck/pom.xml (cached in ~/.m2; copied to
# clients/jvm-rck/target/V/lib once per pom change).
# Environment: RCK_ICEBERG_VERSION (as --iceberg-version), TABLEBAY_BIN (default $CARGO_TARGET_DIR/debug/tablebay,
# built first), TABLEBAY_VENV.
# Report: clients/jvm-rck/target/V/rck-report.md; console output: clients/jvm-rck/target/V/rck-console.log.
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

# The kit's version: taken out of the arguments, everything else goes to run_rck.py.
version="${RCK_ICEBERG_VERSION:-}"
args=()
while (($#)); do
    case "$1" in
        --iceberg-version) version="${2:?--iceberg-version needs a version}"; shift 2 ;;
        --iceberg-version=*) version="${1#*=}"; shift ;;
        *) args+=("$1"); shift ;;
    esac
done
if [[ -z "$version" ]]; then
    version="$(sed -n 's:.*<iceberg.version>\(.*\)</iceberg.version>.*:\1:p' "$rck_dir/pom.xml")"
fi
if [[ ! "$version" =~ ^[0-9]+(\.[0-9]+)+$ ]]; then
    echo "rck: '$version' is not an Iceberg release number (e.g. 1.10.1)" >&2
    exit 2
fi
out="$rck_dir/target/$version"

# The class path of that version: re-resolved only when pom.xml changes.
lib="$out/lib"
stamp="$lib/.pom.sha256"
want="$(sha256sum "$rck_dir/pom.xml" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
    echo "rck: resolving the Iceberg $version RCK class path with Maven (cached in ~/.m2)"
    rm -rf "$lib"
    maven "$rck_dir" dependency:copy-dependencies -Diceberg.version="$version" -DoutputDirectory="$lib"
    echo "$want" > "$stamp"
fi

# This tree's binary, unless one is named (the harness refuses one built from other sources: tablebay_test/binary.py).
if [[ "$TABLEBAY_BIN" == "$CARGO_TARGET_DIR/debug/tablebay" ]]; then
    cargo build -p tablebay
fi

venv="$(scripts/python-env.sh | tail -n 1)"
exec "$venv/bin/python" "$rck_dir/run_rck.py" --iceberg-version "$version" --lib "$lib" --out "$out" ${args[@]+"${args[@]}"}
