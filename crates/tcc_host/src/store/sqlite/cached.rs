//! The connections' statement cache, as the SQLite backend uses it.

use rusqlite::Connection;

/// Statements through the connection's statement cache: the store runs the
/// same few statements for every step, and parsing them each time was a
/// measurable share of a step's CPU.
pub(crate) trait Cached {
    fn exec_cached<P: rusqlite::Params>(&self, sql: &str, p: P) -> rusqlite::Result<usize>;
    fn query_row_cached<T, P: rusqlite::Params>(
        &self,
        sql: &str,
        p: P,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T>;
}

impl Cached for Connection {
    fn exec_cached<P: rusqlite::Params>(&self, sql: &str, p: P) -> rusqlite::Result<usize> {
        self.prepare_cached(sql)?.execute(p)
    }
    fn query_row_cached<T, P: rusqlite::Params>(
        &self,
        sql: &str,
        p: P,
        f: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.prepare_cached(sql)?.query_row(p, f)
    }
}
