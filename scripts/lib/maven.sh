# Sourced by the scripts that run Maven (jvm-tools.sh, jvm-build.sh, jvm-pipeline-build.sh, jvm-kafka-connect.sh,
# rck.sh): the JDK and Maven, and the one way the project calls `mvn`.
#
#   jvm_tools                 java and mvn on PATH: Debian's maven and default-jdk-headless (Maven 3.8+, Java 17+)
#                             are installed with apt-get when missing and this is root; otherwise it fails, naming them
#   maven DIR GOAL [ARG...]   mvn -q -B -Dstyle.color=never GOAL ARG... in DIR (all output on stderr);
#                             MAVEN_REPO_LOCAL moves the dependency cache (default ~/.m2/repository)
#
# Callers set `repo_root` and `maven_who` (their name, for messages) before sourcing this.

maven_who="${maven_who:-maven}"

jvm_tools() {
    if command -v mvn > /dev/null && command -v java > /dev/null; then
        return 0
    fi
    if command -v apt-get > /dev/null && [[ "$(id -u)" == 0 ]]; then
        echo "$maven_who: installing maven and a JDK with apt-get" >&2
        apt-get update -qq >&2 \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven default-jdk-headless >&2
    fi
    local tool
    for tool in java mvn; do
        if ! command -v "$tool" > /dev/null; then
            echo "$maven_who: $tool not found (Maven 3.8+ and Java 17+ are needed; Debian: apt-get install -y" \
                "default-jdk-headless maven, or run scripts/jvm-tools.sh as root)" >&2
            return 1
        fi
    done
}

maven() {
    local dir="$1"
    shift
    local args=(-q -B -Dstyle.color=never)
    if [[ -n "${MAVEN_REPO_LOCAL:-}" ]]; then
        args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL")
    fi
    echo "$maven_who: mvn ${args[*]} $* in ${dir#"$repo_root"/}" >&2
    (cd "$dir" && mvn "${args[@]}" "$@") >&2
}
