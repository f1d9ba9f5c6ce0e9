#!/usr/bin/env bash
# Builds this worktree's tablebay binary and copies it to a path of its own, printed on the last line.
# Several worktrees share CARGO_TARGET_DIR, so $CARGO_TARGET_DIR/debug/tablebay may be another worktree's build:
# tests in this worktree should run with TABLEBAY_BIN=$(scripts/build-bin.sh | tail -n 1). The harnesses check that
# a binary was built from their tree (`tablebay --version` names the source digest; clients/README.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tablebay-target}"
cargo build -p tablebay "$@" >&2
out="$HOME/.cache/tablebay-bin/$(basename "$PWD")"
mkdir -p "$out"
cp "$CARGO_TARGET_DIR/debug/tablebay" "$out/tablebay.tmp" && mv "$out/tablebay.tmp" "$out/tablebay"
echo "$out/tablebay"
