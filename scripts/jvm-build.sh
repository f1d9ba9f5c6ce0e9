#!/usr/bin/env bash
# Builds the JVM S3 check (clients/jvm: AWS SDK for Java v2 at default checksum settings) with
# `mvn -q -B package` (scripts/lib/maven.sh; installs Maven and a JDK first when missing and root). Dependencies
# come from Maven Central and are cached in ~/.m2 (MAVEN_REPO_LOCAL to move it). Prints the path of the runnable
# jar on its last line:
#   java -jar clients/jvm/target/tablebay-s3-check.jar   (settings in TABLEBAY_S3_* env, see Main.java)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
maven_who=jvm-build
# shellcheck source=lib/maven.sh
source "$repo_root/scripts/lib/maven.sh"

jvm_tools
maven "$repo_root/clients/jvm" package

jar="$repo_root/clients/jvm/target/tablebay-s3-check.jar"
[[ -f "$jar" ]] || { echo "jvm-build: $jar was not built" >&2; exit 1; }
echo "$jar"
