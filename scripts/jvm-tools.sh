#!/usr/bin/env bash
# Makes sure java (17+) and mvn (3.8+) are on PATH, installing Debian's packages as root when they are missing
# (scripts/lib/maven.sh). The set-up every JVM stage of scripts/test.sh needs (jvm-build, jvm-s3, kafka-connect,
# spark, flink, rck). Prints their versions.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
maven_who=jvm-tools
# shellcheck source=lib/maven.sh
source "$repo_root/scripts/lib/maven.sh"
jvm_tools
java -version 2>&1 | sed -n 1p  # sed reads everything: head would end the pipe early and, under pipefail, fail on SIGPIPE
mvn -v 2>/dev/null | sed -n 1p
