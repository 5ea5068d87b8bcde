//! The namespace columns of the PostgreSQL backend (`crate::namespace`).

use super::PgStore;
use crate::namespace::NamespaceStore;
use crate::store::StoreError;

impl PgStore {
    fn namespace_of(&self, sql: &'static str, key: &str) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            Ok(c.query_opt(sql, &[&key])?
                .map(|r| r.try_get(0))
                .transpose()?)
        })
    }
}

impl NamespaceStore for PgStore {
    fn execution_namespace(&self, id: &str) -> Result<Option<String>, StoreError> {
        self.namespace_of("SELECT namespace FROM executions WHERE id = $1", id)
    }

    fn program_namespace(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.namespace_of("SELECT namespace FROM programs WHERE name = $1", name)
    }

    fn program_with_namespace(&self, name: &str) -> Result<Option<(String, String)>, StoreError> {
        self.read(|c| {
            Ok(c.query_opt(
                "SELECT hash, namespace FROM programs WHERE name = $1",
                &[&name],
            )?
            .map(|r| Ok::<_, postgres::Error>((r.try_get(0)?, r.try_get(1)?)))
            .transpose()?)
        })
    }

    fn schedule_namespace(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.namespace_of("SELECT namespace FROM schedules WHERE name = $1", name)
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
            let n = c.execute(
                "INSERT INTO programs (name, hash, updated_ms, namespace) VALUES ($1, $2, $3, $4)
                   ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, updated_ms = excluded.updated_ms
                   WHERE programs.namespace = excluded.namespace",
                &[&name, &hash, &now, &namespace],
            )?;
            Ok(n == 1)
        })
    }

    fn programs_in(&self, namespace: &str) -> Result<Vec<(String, String)>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                "SELECT name, hash FROM programs WHERE namespace = $1 ORDER BY name",
                &[&namespace],
            )?;
            Ok(rows
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<_, postgres::Error>>()?)
        })
    }

    fn namespaces(&self) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            let rows = c.query(
                "WITH RECURSIVE e(n) AS (
                   SELECT (SELECT MIN(namespace) FROM executions)
                   UNION ALL
                   SELECT (SELECT MIN(namespace) FROM executions WHERE namespace > e.n) FROM e WHERE e.n IS NOT NULL
                 )
                 SELECT n FROM e WHERE n IS NOT NULL
                 UNION SELECT namespace FROM programs
                 UNION SELECT namespace FROM schedules
                 ORDER BY 1",
                &[],
            )?;
            Ok(rows
                .iter()
                .map(|r| r.try_get(0))
                .collect::<Result<_, postgres::Error>>()?)
        })
    }
}
