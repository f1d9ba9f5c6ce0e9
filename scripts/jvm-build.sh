#!/usr/bin/env bash
# Builds the JVM S3 check (clients/jvm: AWS SDK for Java v2 at default checksum settings) with
# `mvn -q -B package`. Dependencies come from Maven Central and are cached in ~/.m2 (MAVEN_REPO_LOCAL to
# move it). Prints the path of the runnable jar on its last line:
#   java -jar clients/jvm/target/tablebay-s3-check.jar   (settings in TABLEBAY_S3_* env, see Main.java)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root/clients/jvm"

if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
    # A machine without them: Debian's packages (Maven 3.8, and a JDK >= 17) when we may install.
    if command -v apt-get >/dev/null && [[ "$(id -u)" == 0 ]]; then
        echo "jvm-build: installing maven and a JDK with apt-get" >&2
        apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven default-jdk-headless >&2
    else
        echo "jvm-build: mvn or java not found (Maven 3.8+ and Java 17+ are needed)" >&2
        exit 1
    fi
fi
args=(-q -B -Dstyle.color=never package)
if [[ -n "${MAVEN_REPO_LOCAL:-}" ]]; then
    args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
fi
echo "jvm-build: mvn ${args[*]} in clients/jvm" >&2
mvn "${args[@]}" >&2

jar="$repo_root/clients/jvm/target/tablebay-s3-check.jar"
[[ -f "$jar" ]] || { echo "jvm-build: $jar was not built" >&2; exit 1; }
echo "$jar"
