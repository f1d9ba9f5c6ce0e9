#!/usr/bin/env bash
# Builds one of the JVM pipeline clients, clients/jvm/spark or clients/jvm/flink: `mvn package` compiles its
# Java mains (and the shared clients/jvm/scenario-steps) into target/classes and copies its class path (every jar,
# from Maven Central, cached in ~/.m2; MAVEN_REPO_LOCAL to move it) into lib/ (scripts/lib/maven.sh, which installs
# Maven and a JDK first when missing and root). Re-run only when pom.xml or a source file changed. Prints the class
# path (target/classes:lib/*) on its last line.
#
#   scripts/jvm-pipeline-build.sh spark|flink
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
name="${1:-}"
case "$name" in
    spark|flink) ;;
    *) echo "usage: scripts/jvm-pipeline-build.sh spark|flink" >&2; exit 2 ;;
esac
dir="$repo_root/clients/jvm/$name"

maven_who=jvm-pipeline-build
# shellcheck source=lib/maven.sh
source "$repo_root/scripts/lib/maven.sh"
jvm_tools

# What the build depends on; the same digest means the last build still holds.
stamp="$dir/target/.inputs.sha256"
want="$(cd "$dir" && find pom.xml src ../scenario-steps -type f -print0 | sort -z | xargs -0 sha256sum \
    | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" || ! -d "$dir/lib" ]]; then
    rm -rf "$dir/lib"
    maven "$dir" package
    echo "$want" > "$stamp"
fi
echo "$dir/target/classes:$dir/lib/*"
