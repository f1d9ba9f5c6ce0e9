#!/usr/bin/env bash
# The Kafka Connect scenario (issue 5, docs/clients/kafka-connect.md): builds clients/jvm/kafka-connect with
# Maven (scripts/lib/maven.sh; a Kafka 3.9 broker and Connect worker in lib/kafka, the Iceberg sink 1.10.1 and the
# guide's plugin jars in lib/plugins/iceberg; all from Maven Central, cached in ~/.m2 — MAVEN_REPO_LOCAL to move
# it), then runs scenario.py with the project's venv against TABLEBAY_BIN. Extra arguments go to scenario.py
# (e.g. --events 50000 --keep). Exits non-zero if a step failed.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
maven_who=jvm-kafka-connect
# shellcheck source=lib/maven.sh
source "$repo_root/scripts/lib/maven.sh"
jvm_tools
cd "$repo_root/clients/jvm/kafka-connect"
# lib/ anew: copy-dependencies never removes a jar, and a stale version in plugin.path would shadow the new one.
rm -rf lib
maven "$PWD" package

venv="${TABLEBAY_VENV:-$HOME/.cache/tablebay-venv}"
export TABLEBAY_BIN="${TABLEBAY_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/tablebay-target}/debug/tablebay}"
echo "jvm-kafka-connect: scenario.py with TABLEBAY_BIN=$TABLEBAY_BIN" >&2
exec "$venv/bin/python" scenario.py "$@"
