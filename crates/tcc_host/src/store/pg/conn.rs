//! Connections of the PostgreSQL backend: the prepared-statement cache,
//! and how driver errors become store errors.

use super::url::Target;
use crate::store::{DbError, StoreError};
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, GenericClient, Row, Statement};
use std::collections::HashMap;

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> StoreError {
        let message = match e.as_db_error() {
            Some(db) => format!("{} ({})", db.message(), db.code().code()),
            None => e.to_string(),
        };
        StoreError::Db(DbError::with_source(message, e))
    }
}

/// Whether a failure is a deadlock or serialization failure (worth a retry).
pub(crate) fn retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

/// An error inside a job: a database error (maybe retryable) or a store-level one.
pub(crate) enum JobError {
    /// The driver failed.
    Pg(postgres::Error),
    /// A store-level failure (conflict, not found, corrupt row).
    Store(StoreError),
}

impl From<postgres::Error> for JobError {
    fn from(e: postgres::Error) -> JobError {
        JobError::Pg(e)
    }
}

impl From<StoreError> for JobError {
    fn from(e: StoreError) -> JobError {
        JobError::Store(e)
    }
}

impl From<JobError> for StoreError {
    fn from(e: JobError) -> StoreError {
        match e {
            JobError::Pg(e) => e.into(),
            JobError::Store(e) => e,
        }
    }
}

/// Prepared statements of one connection, by SQL text.
pub(crate) type Cache = HashMap<String, Statement>;

/// A connection or transaction with its connection's prepared-statement
/// cache: a cached statement executes in one round trip (an unprepared
/// query with parameters needs a prepare round trip first).
pub(crate) struct Conn<'a, C> {
    pub(crate) c: &'a mut C,
    pub(crate) cache: &'a mut Cache,
}

impl<C: GenericClient> Conn<'_, C> {
    pub(crate) fn stmt(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.cache.get(sql) {
            return Ok(s.clone());
        }
        let s = self.c.prepare(sql)?;
        self.cache.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    pub(crate) fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        let s = self.stmt(sql)?;
        self.c.execute(&s, params)
    }

    pub(crate) fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, postgres::Error> {
        let s = self.stmt(sql)?;
        self.c.query(&s, params)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, postgres::Error> {
        let s = self.stmt(sql)?;
        self.c.query_opt(&s, params)
    }

    pub(crate) fn query_one(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, postgres::Error> {
        let s = self.stmt(sql)?;
        self.c.query_one(&s, params)
    }
}
/// What a job's body returns.
pub(crate) type JobResult<R> = Result<R, JobError>;

/// A writer connection (re-opened from `target` when broken).
pub(crate) struct WriterConn {
    pub(crate) client: Client,
    pub(crate) cache: Cache,
    pub(crate) target: Target,
}
