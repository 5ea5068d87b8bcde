//! One in-process lock per database file, taken around every write
//! transaction of the connections of this process that write the file in
//! turn: the execution store's writer (a group) and the worker-task table's
//! connection (`worker_tasks::sqlite`).
//!
//! SQLite lets one connection write at a time; a connection that finds the
//! write lock taken gets `SQLITE_BUSY`, and its busy handler sleeps 1, 2,
//! 5, 10… ms between tries. Under load the two writers of one host met
//! there on most task writes (a peer-benchmark run of 600 workflows slept
//! about 1 000 times, ~1.7 s in all, on the path of the workflows), though
//! each holds the lock well under a millisecond besides the group's
//! `fsync`. Taking this lock first, a writer waits exactly as long as the
//! other holds it. The busy handler stays for writers in other processes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The gate of one database file.
#[derive(Debug, Clone, Default)]
pub struct WriteGate(Arc<Mutex<()>>);

/// Held while a write transaction runs; the gate opens when it is dropped.
pub struct Held<'a> {
    _guard: MutexGuard<'a, ()>,
}

impl WriteGate {
    /// The gate of the database file at `path` (the same for every path
    /// naming the same existing file; call it once the file exists).
    pub fn for_file(path: &Path) -> WriteGate {
        static GATES: OnceLock<Mutex<HashMap<PathBuf, WriteGate>>> = OnceLock::new();
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let gates = GATES.get_or_init(|| Mutex::new(HashMap::new()));
        match gates.lock() {
            Ok(mut m) => m.entry(key).or_default().clone(),
            // A panic while the map was held: a gate of its own (the busy
            // handler still orders the writers).
            Err(_) => WriteGate::default(),
        }
    }

    /// Waits for the gate and holds it. A gate poisoned by a panic in a
    /// holder is held as it is (it guards no data).
    pub fn enter(&self) -> Held<'_> {
        Held {
            _guard: self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_paths_of_one_file_share_a_gate_and_other_files_do_not() {
        let dir = std::env::temp_dir().join(crate::ids::random_id("gate"));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.db");
        let b = dir.join("b.db");
        std::fs::write(&a, b"").unwrap();
        std::fs::write(&b, b"").unwrap();
        let g1 = WriteGate::for_file(&a);
        let g2 = WriteGate::for_file(&dir.join(".").join("a.db"));
        let other = WriteGate::for_file(&b);
        let held = g1.enter();
        assert!(g2.0.try_lock().is_err(), "the same file's gate is held");
        assert!(other.0.try_lock().is_ok(), "another file's gate is free");
        drop(held);
        assert!(g2.0.try_lock().is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
