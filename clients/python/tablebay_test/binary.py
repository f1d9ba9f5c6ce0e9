"""The `tablebay` binary the suite starts, checked against the sources beside it.

`binary_path()` is `TABLEBAY_BIN` when set, else `$CARGO_TARGET_DIR/debug/tablebay` (default target dir as in
scripts/test.sh). The binary reports the digest of the sources it was built from in `tablebay --version`
(crates/tablebay/build/source_id.rs); `source_id()` computes the same digest of this tree. A binary whose digest
differs (built from older sources, or from another worktree sharing the target dir) is refused with
`BinaryError`, except:

- without `TABLEBAY_BIN`, a missing or stale default binary is rebuilt first (`cargo build -p tablebay`);
- `TABLEBAY_BIN_UNCHECKED=1` runs whatever binary is named, unchecked (a test of an older build on purpose).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
UNCHECKED_VAR = "TABLEBAY_BIN_UNCHECKED"
# As in crates/tablebay/build/source_id.rs.
ROOT_FILES = ("Cargo.toml", "Cargo.lock")
CRATE_PARTS = ("Cargo.toml", "build.rs", "build", "src", "migrations")
VERSION_SOURCE = re.compile(r"\(source ([0-9a-f]+)")


class BinaryError(RuntimeError):
    pass


def _files(path: Path):
    if path.is_dir():
        for child in path.iterdir():
            if not child.name.startswith("."):
                yield from _files(child)
    elif path.is_file():
        yield path


@functools.cache
def source_id(root: Path = REPO) -> str:
    """The digest of the sources below the workspace `root` (16 hex digits), as `build.rs` computes it."""
    inputs = [root / name for name in ROOT_FILES]
    for crate in sorted((root / "crates").iterdir()):
        if (crate / "Cargo.toml").is_file():
            inputs += [crate / part for part in CRATE_PARTS]
    named = sorted((f.relative_to(root).as_posix(), f) for p in inputs if p.exists() for f in _files(p))
    digest = hashlib.sha256()
    for name, path in named:
        data = path.read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()[:16]


def default_binary() -> Path:
    target = os.environ.get("CARGO_TARGET_DIR") or str(Path.home() / ".cache" / "tablebay-target")
    return Path(target) / "debug" / "tablebay"


def problem_with(binary: Path) -> str | None:
    """Why `binary` is not this tree's build, or None when it is."""
    if not binary.is_file():
        return "does not exist"
    try:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    except OSError as e:
        return f"does not run ({e})"
    m = VERSION_SOURCE.search(out.stdout)
    want = source_id()
    if m is None or m.group(1) != want:
        return (f"was not built from the sources in {REPO} (their digest is {want}; the binary says "
                f"{out.stdout.strip()!r})")
    return None


def binary_path() -> Path:
    """The binary to start, checked (see the module doc); raises `BinaryError` naming the way out."""
    explicit = os.environ.get("TABLEBAY_BIN")
    binary = Path(explicit) if explicit else default_binary()
    if os.environ.get(UNCHECKED_VAR) == "1":
        return binary
    outcome = _checked(binary, bool(explicit))
    if isinstance(outcome, BinaryError):
        raise outcome
    return outcome


@functools.cache
def _checked(binary: Path, explicit: bool) -> Path | BinaryError:
    """Once per binary and process (a failed check or build is not tried again for the next server)."""
    try:
        return _check(binary, explicit)
    except BinaryError as e:
        return e


def _check(binary: Path, explicit: bool) -> Path:
    problem = problem_with(binary)
    if problem is None:
        return binary
    if explicit:
        raise BinaryError(
            f"TABLEBAY_BIN={binary} {problem}. Rebuild it (cargo build -p tablebay, or scripts/build-bin.sh for a "
            f"copy of this worktree's binary), unset TABLEBAY_BIN to let the suite build {default_binary()}, or "
            f"set {UNCHECKED_VAR}=1 to run it anyway.")
    print(f"tablebay_test: {binary} {problem}; running cargo build -p tablebay", file=sys.stderr)
    try:
        subprocess.run(["cargo", "build", "-p", "tablebay"], cwd=REPO, check=True, stdin=subprocess.DEVNULL,
                       stdout=sys.stderr)
    except (OSError, subprocess.CalledProcessError) as e:
        raise BinaryError(f"{binary} {problem}, and cargo build -p tablebay failed: {e}") from e
    problem = problem_with(binary)
    if problem is not None:
        raise BinaryError(f"after cargo build -p tablebay, {binary} still {problem} (if cargo found nothing to "
                          "rebuild, touch crates/tablebay/build.rs)")
    return binary
