#!/usr/bin/env bash
# Builds one of the JVM pipeline clients, clients/jvm/spark or clients/jvm/flink: `mvn package` compiles its
# Java mains into target/classes and copies its class path (every jar, from Maven Central, cached in ~/.m2;
# MAVEN_REPO_LOCAL to move it) into lib/. Re-run only when pom.xml or a source file changed. Prints the class
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

for tool in java mvn; do
    if ! command -v "$tool" > /dev/null; then
        echo "jvm-pipeline-build: $tool not found (Debian: apt-get install -y default-jdk-headless maven)" >&2
        exit 2
    fi
done

# What the build depends on; the same digest means the last build still holds.
stamp="$dir/target/.inputs.sha256"
want="$(cd "$dir" && find pom.xml src -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" || ! -d "$dir/lib" ]]; then
    args=(-q -B -Dstyle.color=never package)
    if [[ -n "${MAVEN_REPO_LOCAL:-}" ]]; then
        args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
    fi
    echo "jvm-pipeline-build: mvn ${args[*]} in clients/jvm/$name" >&2
    rm -rf "$dir/lib"
    (cd "$dir" && mvn "${args[@]}") >&2
    echo "$want" > "$stamp"
fi
echo "$dir/target/classes:$dir/lib/*"
