//! The namespace columns of the SQLite backend (`crate::namespace`).

use super::SqliteStore;
use super::cached::Cached;
use crate::namespace::NamespaceStore;
use crate::store::StoreError;
use rusqlite::{OptionalExtension, params};

impl SqliteStore {
    fn namespace_of(&self, sql: &'static str, key: &str) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            Ok(c.query_row_cached(sql, params![key], |r| r.get(0))
                .optional()?)
        })
    }
}

impl NamespaceStore for SqliteStore {
    fn execution_namespace(&self, id: &str) -> Result<Option<String>, StoreError> {
        self.namespace_of("SELECT namespace FROM executions WHERE id = ?1", id)
    }

    fn program_namespace(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.namespace_of("SELECT namespace FROM programs WHERE name = ?1", name)
    }

    fn program_with_namespace(&self, name: &str) -> Result<Option<(String, String)>, StoreError> {
        self.read(|c| {
            Ok(c.query_row_cached(
                "SELECT hash, namespace FROM programs WHERE name = ?1",
                params![name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?)
        })
    }

    fn schedule_namespace(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.namespace_of("SELECT namespace FROM schedules WHERE name = ?1", name)
    }

    fn set_program_in(
        &self,
        namespace: &str,
        name: &str,
        hash: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let (namespace, name, hash) = (namespace.to_string(), name.to_string(), hash.to_string());
        self.write(move |c| {
            let n = c.exec_cached(
                "INSERT INTO programs (name, hash, updated_ms, namespace) VALUES (?1, ?2, ?3, ?4)
                   ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, updated_ms = excluded.updated_ms
                   WHERE programs.namespace = excluded.namespace",
                params![name, hash, now, namespace],
            )?;
            Ok(n == 1)
        })
    }

    fn programs_in(&self, namespace: &str) -> Result<Vec<(String, String)>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT name, hash FROM programs WHERE namespace = ?1 ORDER BY name",
            )?;
            let v = st
                .query_map(params![namespace], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }

    fn namespaces(&self) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "WITH RECURSIVE e(n) AS (
                   SELECT (SELECT MIN(namespace) FROM executions)
                   UNION ALL
                   SELECT (SELECT MIN(namespace) FROM executions WHERE namespace > e.n) FROM e WHERE e.n IS NOT NULL
                 )
                 SELECT n FROM e WHERE n IS NOT NULL
                 UNION SELECT namespace FROM programs
                 UNION SELECT namespace FROM schedules
                 ORDER BY 1",
            )?;
            let v = st
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            Ok(v)
        })
    }
}
