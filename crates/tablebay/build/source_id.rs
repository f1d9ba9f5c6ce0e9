//! The source identity of a Tablebay build: one SHA-256 over every file that goes into the `tablebay` binary, so a
//! test harness can tell whether the binary it is about to start was built from the sources beside it.
//!
//! Shared by `build.rs` (which bakes the digest into `tablebay --version`) and the integration harness
//! (`tests/it/server.rs`); `clients/python/tablebay_test/server.py` computes the same digest in Python. The three
//! must agree: the files are the workspace's `Cargo.toml` and `Cargo.lock`, and for each crate under `crates/`
//! its [`CRATE_PARTS`] (tests, benches, fuzz targets and dot-files are left out); each file adds its path relative
//! to the workspace (`/`-separated), a NUL, its length in decimal, a NUL and its bytes, in path order.

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The files of the workspace root that are part of every build.
pub const ROOT_FILES: [&str; 2] = ["Cargo.toml", "Cargo.lock"];

/// What of each crate goes into the binary.
pub const CRATE_PARTS: [&str; 5] = ["Cargo.toml", "build.rs", "build", "src", "migrations"];

/// The existing top-level inputs below `root` (files and directories), for `cargo:rerun-if-changed`.
pub fn inputs(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = ROOT_FILES
        .iter()
        .map(|name| root.join(name))
        .filter(|path| path.exists())
        .collect();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<io::Result<_>>()?;
    crates.sort();
    for dir in crates.iter().filter(|dir| dir.join("Cargo.toml").is_file()) {
        found.extend(
            CRATE_PARTS
                .iter()
                .map(|part| dir.join(part))
                .filter(|path| path.exists()),
        );
    }
    Ok(found)
}

/// The digest of the sources below the workspace `root`: 16 hex digits.
pub fn digest(root: &Path) -> io::Result<String> {
    let mut files = Vec::new();
    for input in inputs(root)? {
        collect(&input, &mut files)?;
    }
    let mut named: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|path| (relative(root, &path), path))
        .collect();
    named.sort();
    let mut hash = Sha256::new();
    for (name, path) in named {
        let bytes = std::fs::read(&path)?;
        hash.update(name.as_bytes());
        hash.update(b"\0");
        hash.update(bytes.len().to_string().as_bytes());
        hash.update(b"\0");
        hash.update(&bytes);
    }
    let hex: String = hash
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Ok(hex.chars().take(16).collect())
}

/// Every regular file at or below `path`, but those whose name starts with a dot.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            if !entry.file_name().to_string_lossy().starts_with('.') {
                collect(&entry.path(), out)?;
            }
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
    Ok(())
}

/// `path` relative to `root`, with `/` between its parts.
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}
