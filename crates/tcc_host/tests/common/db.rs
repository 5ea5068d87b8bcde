//! A scratch store for one test: a SQLite file in a fresh temporary
//! directory, or a PostgreSQL schema of its own (when the test database is
//! reachable), removed when dropped.
#![allow(dead_code)] // each test uses a different subset

use std::path::PathBuf;
use std::sync::Arc;
use tcc_host::store::Store;
use tcc_host::store::pg::PgStore;
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::test_support::ScratchSchema;

/// Where a test's store lives.
pub enum TestDb {
    /// A directory holding `t.db`.
    Sqlite(PathBuf),
    /// A schema of the test database.
    Pg(ScratchSchema),
}

impl TestDb {
    /// A fresh SQLite store, or with `pg` a PostgreSQL schema named after
    /// `tag`; `None` when PostgreSQL is not reachable (the test skips,
    /// unless `IRKIT_REQUIRE_POSTGRES` makes `ScratchSchema` fail).
    pub fn new(pg: bool, tag: &str) -> Option<TestDb> {
        if pg {
            return ScratchSchema::create(tag).unwrap().map(TestDb::Pg);
        }
        let dir = std::env::temp_dir().join(tcc_host::random_id(&format!("tcc-{tag}-")));
        std::fs::create_dir_all(&dir).unwrap();
        Some(TestDb::Sqlite(dir))
    }

    /// SQLite, and PostgreSQL when reachable.
    pub fn all(tag: &str) -> Vec<TestDb> {
        [false, true]
            .into_iter()
            .filter_map(|pg| TestDb::new(pg, tag))
            .collect()
    }

    /// Opens (and migrates) the store.
    pub fn open(&self) -> Arc<dyn Store> {
        match self {
            TestDb::Sqlite(d) => Arc::new(SqliteStore::open(&d.join("t.db")).unwrap()),
            TestDb::Pg(s) => Arc::new(PgStore::open(&s.url()).unwrap()),
        }
    }

    /// Two nodes' stores: two on one PostgreSQL schema; for SQLite (a
    /// single node) one store twice.
    pub fn nodes(&self) -> (Arc<dyn Store>, Arc<dyn Store>) {
        match self {
            TestDb::Sqlite(_) => {
                let s = self.open();
                (s.clone(), s)
            }
            TestDb::Pg(_) => (self.open(), self.open()),
        }
    }

    /// Runs raw SQL against the backing database (test tampering).
    pub fn sql(&self, sql: &str) {
        match self {
            TestDb::Sqlite(d) => rusqlite::Connection::open(d.join("t.db"))
                .unwrap()
                .execute_batch(sql)
                .unwrap(),
            TestDb::Pg(s) => s.execute(sql).unwrap(),
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let TestDb::Sqlite(d) = self {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}
