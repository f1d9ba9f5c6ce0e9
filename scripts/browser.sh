#!/usr/bin/env bash
# Installs the browser the console's real-browser test drives (clients/python/test_console.py): Debian's
# `chromium` and `chromium-driver`, with apt-get, only when either is missing. Prints the chromedriver path on its
# last line.
#
# The test runs Chromium headless with its own fresh profile and everything that would phone home switched off
# (see test_console.py): this machine has no network beyond its package sources.
set -euo pipefail

log() { echo "browser: $*" >&2; }

find_driver() { command -v chromedriver || { [[ -x /usr/bin/chromedriver ]] && echo /usr/bin/chromedriver; } || true; }
find_browser() { command -v chromium || command -v chromium-browser || true; }

if [[ -z "$(find_driver)" || -z "$(find_browser)" ]]; then
    if ! command -v apt-get >/dev/null; then
        log "chromium and chromium-driver are missing and there is no apt-get to install them"; exit 1
    fi
    if [[ "$(id -u)" != 0 ]]; then
        log "chromium and chromium-driver are missing; installing them needs root (apt-get)"; exit 1
    fi
    log "installing chromium and chromium-driver"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver fonts-dejavu-core >&2
fi

driver="$(find_driver)"
browser="$(find_browser)"
if [[ -z "$driver" || -z "$browser" ]]; then
    log "chromium or chromium-driver is still missing after the install"; exit 1
fi
log "$("$browser" --version 2>/dev/null || echo chromium) / $("$driver" --version 2>/dev/null | head -n1)"
echo "$driver"
