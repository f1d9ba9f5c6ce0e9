#!/usr/bin/env bash
# Creates (idempotently) the Python venv that the client suite uses and installs
# clients/python/requirements.txt into it. Reinstalls only when that file changes
# (its sha256 is stored in the venv). Prints the venv path on its last line.
#
#   TABLEBAY_VENV   venv location (default: $HOME/.cache/tablebay-venv)
#   PYTHON          interpreter to create the venv with (default: python3)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requirements="$repo_root/clients/python/requirements.txt"
# Installed with --no-deps (see the file): pins that conflict on paper but work together.
requirements_nodeps="$repo_root/clients/python/requirements-nodeps.txt"
venv="${TABLEBAY_VENV:-$HOME/.cache/tablebay-venv}"
python="${PYTHON:-python3}"
stamp="$venv/.tablebay-requirements.sha256"

log() { echo "python-env: $*" >&2; }

want_hash="$( (sha256sum "$requirements" "$requirements_nodeps"; "$python" -c 'import sys; print(sys.version)') | sha256sum | cut -d' ' -f1)"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want_hash" ]]; then
    log "up to date ($venv)"
else
    if [[ ! -x "$venv/bin/python" ]]; then
        log "creating venv at $venv"
        mkdir -p "$(dirname "$venv")"
        if ! "$python" -m venv "$venv"; then
            # Debian's python3 without ensurepip: install the venv module and retry once.
            if command -v apt-get >/dev/null && [[ "$(id -u)" == 0 ]]; then
                log "python venv module missing; installing python3-venv"
                apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
                rm -rf "$venv"
                "$python" -m venv "$venv"
            else
                log "cannot create a venv with $python"; exit 1
            fi
        fi
    fi
    rm -f "$stamp"
    log "installing $(grep -cvE '^\s*(#|$)' "$requirements") pinned requirements"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r "$requirements_nodeps" >&2
    echo "$want_hash" > "$stamp"
    log "installed: $("$venv/bin/aws" --version 2>&1)"
fi

echo "$venv"
