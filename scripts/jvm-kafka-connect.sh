#!/usr/bin/env bash
# The Kafka Connect scenario (issue 5, docs/clients/kafka-connect.md): builds clients/jvm/kafka-connect with
# Maven (a Kafka 3.9 broker and Connect worker in lib/kafka, the Iceberg sink 1.10.1 and the guide's plugin jars
# in lib/plugins/iceberg; all from Maven Central, cached in ~/.m2 — MAVEN_REPO_LOCAL to move it), then runs
# scenario.py with the project's venv against TABLEBAY_BIN. Extra arguments go to scenario.py
# (e.g. --events 50000 --keep). Exits non-zero if a step failed.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root/clients/jvm/kafka-connect"

for tool in mvn java; do
    command -v "$tool" >/dev/null || { echo "jvm-kafka-connect: $tool not found (scripts/jvm-build.sh installs it)" >&2; exit 1; }
done
args=(-q -B -Dstyle.color=never package)
if [[ -n "${MAVEN_REPO_LOCAL:-}" ]]; then
    args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
fi
echo "jvm-kafka-connect: mvn ${args[*]} in clients/jvm/kafka-connect" >&2
# lib/ anew: copy-dependencies never removes a jar, and a stale version in plugin.path would shadow the new one.
rm -rf lib
mvn "${args[@]}" >&2

venv="${TABLEBAY_VENV:-$HOME/.cache/tablebay-venv}"
export TABLEBAY_BIN="${TABLEBAY_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/tablebay-target}/debug/tablebay}"
echo "jvm-kafka-connect: scenario.py with TABLEBAY_BIN=$TABLEBAY_BIN" >&2
exec "$venv/bin/python" scenario.py "$@"
