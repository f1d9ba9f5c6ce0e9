//! Bakes the source identity (`build/source_id.rs`) into the binary: `tablebay --version` names the digest of the
//! sources it was built from and their tree, which the test harnesses compare with the sources beside them.

#[path = "build/source_id.rs"]
mod source_id;

use std::path::Path;

fn main() -> std::io::Result<()> {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").map_err(std::io::Error::other)?;
    let root = Path::new(&manifest).join("../..").canonicalize()?;
    for input in source_id::inputs(&root)? {
        println!("cargo:rerun-if-changed={}", input.display());
    }
    println!(
        "cargo:rustc-env=TABLEBAY_SOURCE_ID={}",
        source_id::digest(&root)?
    );
    println!("cargo:rustc-env=TABLEBAY_SOURCE_TREE={}", root.display());
    Ok(())
}
