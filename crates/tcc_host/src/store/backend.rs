//! Which of this crate's backends a [`Store`] is, for the features a
//! backend keeps beside the `Store` trait (schedules, flow limits, pause
//! marks, retention, traces, sources, namespaces): each feature's
//! `store_of` turns the backend into its own row trait.

use super::Store;
use super::pg::PgStore;
use super::sqlite::SqliteStore;

/// One of this crate's stores, as its concrete type.
pub enum Backend<'a> {
    /// The embedded SQLite store.
    Sqlite(&'a SqliteStore),
    /// The PostgreSQL store.
    Pg(&'a PgStore),
}

/// The concrete backend of `store` (`None` for a store of another crate,
/// e.g. a test double, which keeps none of the features).
pub fn backend(store: &dyn Store) -> Option<Backend<'_>> {
    let any = store.as_any()?;
    if let Some(s) = any.downcast_ref::<SqliteStore>() {
        return Some(Backend::Sqlite(s));
    }
    any.downcast_ref::<PgStore>().map(Backend::Pg)
}
