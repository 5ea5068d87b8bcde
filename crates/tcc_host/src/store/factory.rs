//! `--database` to a store: a `postgres://` / `postgresql://` URL opens
//! the PostgreSQL backend, anything else is a SQLite file path.

use super::pg::PgStore;
use super::sqlite::SqliteStore;
use super::{Store, StoreError};
use std::sync::Arc;

/// Whether `--database` names a PostgreSQL database (else a SQLite file).
pub fn is_postgres_url(database: &str) -> bool {
    database.starts_with("postgres://") || database.starts_with("postgresql://")
}

/// `--database` as it may be shown in messages and logs: a PostgreSQL
/// URL's password is replaced by `***`.
pub fn redact_database(database: &str) -> String {
    if !is_postgres_url(database) {
        return database.to_string();
    }
    let Some((scheme, rest)) = database.split_once("://") else {
        return database.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    // A `password=` query parameter too.
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some(("password", _)) => "password=***".to_string(),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// Opens a store from `--database`: a `postgres://` / `postgresql://` URL
/// (optionally `?schema=NAME`) or a SQLite file path.
pub fn open_store(database: &str) -> Result<Arc<dyn Store>, StoreError> {
    if is_postgres_url(database) {
        return Ok(Arc::new(PgStore::open(database)?));
    }
    Ok(Arc::new(SqliteStore::open(std::path::Path::new(database))?))
}

#[cfg(test)]
mod redact_tests {
    #[test]
    fn passwords_are_not_shown() {
        use super::redact_database as r;
        assert_eq!(
            r("postgres://irkit:s3cr@t@db.example:5432/x?sslmode=require"),
            "postgres://irkit:***@db.example:5432/x?sslmode=require"
        );
        assert_eq!(r("postgresql://u@h/db"), "postgresql://u@h/db");
        assert_eq!(
            r("postgres://h/db?sslmode=require&password=x"),
            "postgres://h/db?sslmode=require&password=***"
        );
        assert_eq!(r("./irkit-tcc.db"), "./irkit-tcc.db");
    }
}
