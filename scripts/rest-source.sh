#!/usr/bin/env bash
# The source catalog of the table-migration test (clients/python/test_migration.py): Iceberg's own REST catalog
# server, org.apache.iceberg.rest.RESTCatalogServer from Iceberg 1.10.1's test fixtures (a JdbcCatalog on an
# in-memory SQLite behind Jetty), assembled from published jars by clients/jvm-rest-source/pom.xml.
#
#   scripts/rest-source.sh classpath   resolve the jars once (Maven, cached in ~/.m2; a JDK and Maven are installed
#                                       with scripts/lib/maven.sh when missing) and print the class path (lib/*)
#
# The test starts the server itself: `java -cp <classpath> org.apache.iceberg.rest.RESTCatalogServer` with
# CATALOG_WAREHOUSE (its warehouse) and CATALOG_REST_PORT (its port; the server reads every CATALOG_* variable
# as a catalog property, `__` → `-`, `_` → `.`).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$repo_root/clients/jvm-rest-source"
maven_who=rest-source
source "$repo_root/scripts/lib/maven.sh"

case "${1:-}" in
    classpath)
        jvm_tools
        lib="$dir/target/lib"
        stamp="$lib/.pom.sha256"
        want="$(sha256sum "$dir/pom.xml" | cut -d' ' -f1)"
        if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
            rm -rf "$lib"
            maven "$dir" dependency:copy-dependencies -DoutputDirectory="$lib"
            echo "$want" > "$stamp"
        fi
        echo "$lib/*"
        ;;
    *)
        echo "usage: scripts/rest-source.sh classpath" >&2
        exit 2
        ;;
esac
