//! What an acknowledged write means on this server's own disk.
//!
//! By default ([`Durability::Full`]) a write is on stable storage before it is acknowledged: a blob's bytes are
//! synced (`fdatasync`) and so is the directory entry that names it, every SQLite commit syncs its WAL
//! (`synchronous=FULL`), and the files the server writes for itself (key and root-credential files) are synced
//! with their directory. Such a write survives a power loss or a kernel crash, not only a killed process.
//! [`Durability::Relaxed`] skips those syncs: writes survive a process crash (the page cache does) but the last
//! seconds of them may be lost with the machine. PostgreSQL and S3-compatible stores keep their own promises and
//! are not affected by the setting.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// How far an acknowledged write has gone on local disk (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Synced to stable storage before it is acknowledged (the default).
    #[default]
    Full,
    /// Left in the page cache: survives a process crash, not a power loss.
    Relaxed,
}

impl Durability {
    /// Parses the setting's value: `full` or `relaxed`.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "full" => Ok(Self::Full),
            "relaxed" => Ok(Self::Relaxed),
            other => Err(format!(
                "durability must be 'full' or 'relaxed', not {other:?}"
            )),
        }
    }

    /// The setting's value, as [`Durability::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Relaxed => "relaxed",
        }
    }

    /// Whether acknowledged writes are synced.
    pub fn syncs(self) -> bool {
        self == Self::Full
    }
}

/// One sync shared by concurrent writers (group commit). A writer takes a ticket after its change; the first to
/// get the lock syncs for every ticket handed out so far, and the others find their ticket covered when the lock
/// comes to them. Each caller still returns only after a sync that started after its own change.
#[derive(Debug, Default)]
pub(crate) struct SyncGroup {
    /// Tickets handed out: changes made before a ticket need a sync that starts after it.
    requested: AtomicU64,
    /// Every ticket up to this one is covered by a finished sync.
    synced: Mutex<u64>,
}

impl SyncGroup {
    /// Returns once `sync` (this caller's or another's) has run to completion after this call began. Blocks.
    pub(crate) fn sync(&self, sync: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<()> {
        let ticket = self.requested.fetch_add(1, Ordering::SeqCst) + 1;
        let mut synced = self.synced.lock().unwrap_or_else(PoisonError::into_inner);
        if *synced >= ticket {
            return Ok(());
        }
        // Every ticket up to here was taken after its writer's change, so this sync covers them all.
        let covers = self.requested.load(Ordering::SeqCst);
        sync()?;
        *synced = covers;
        Ok(())
    }

    /// Tickets handed out and covered so far (for tests).
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (u64, u64) {
        let synced = *self.synced.lock().unwrap_or_else(PoisonError::into_inner);
        (self.requested.load(Ordering::SeqCst), synced)
    }
}

/// Syncs the directory holding `path`, so that a file created or renamed there is still named after a crash
/// (`fsync` on the file covers its bytes, not the entry).
pub fn sync_parent_dir(path: &Path) -> std::io::Result<()> {
    match path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) => std::fs::File::open(dir)?.sync_all(),
        None => std::fs::File::open(".")?.sync_all(),
    }
}

/// Creates `dir` and its missing ancestors, and makes the entries of `dir` and of every directory made here
/// durable (a directory lost to a power loss would take every file under it along).
pub fn create_dir_all_durably(dir: &Path) -> std::io::Result<()> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .skip(1)
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .collect();
    std::fs::create_dir_all(dir)?;
    missing
        .iter()
        .rev()
        .try_for_each(|made| sync_parent_dir(made))?;
    sync_parent_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_its_own_names_only() {
        for d in [Durability::Full, Durability::Relaxed] {
            assert_eq!(Durability::parse(d.as_str()), Ok(d));
        }
        assert_eq!(Durability::default(), Durability::Full);
        assert!(Durability::parse("FULL").is_err());
        assert!(Durability::parse("none").is_err());
    }

    /// Concurrent callers share syncs, and every ticket is covered by one that started after it.
    #[test]
    fn a_sync_group_covers_every_ticket_with_fewer_syncs() {
        let group = std::sync::Arc::new(SyncGroup::default());
        let runs = std::sync::Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (group, runs) = (std::sync::Arc::clone(&group), std::sync::Arc::clone(&runs));
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        group
                            .sync(|| {
                                runs.fetch_add(1, Ordering::SeqCst);
                                std::thread::sleep(std::time::Duration::from_micros(200));
                                Ok(())
                            })
                            .unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(group.counts(), (320, 320));
        let runs = runs.load(Ordering::SeqCst);
        assert!(runs < 320, "{runs} syncs for 320 tickets: none was shared");
    }

    #[test]
    fn creates_missing_directories() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b/c");
        create_dir_all_durably(&dir).unwrap();
        assert!(dir.is_dir());
        create_dir_all_durably(&dir).unwrap();
    }
}
