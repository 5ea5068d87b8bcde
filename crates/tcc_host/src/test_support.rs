//! Test support (cargo feature `test-support`, on in this crate's own
//! tests): scratch PostgreSQL schemas and the test databases' URLs.

use crate::store::pg::url::parse_url;

/// Test support: a uniquely named schema in the test database, dropped
/// with everything in it when this value is dropped.
///
/// The database is `$IRKIT_TEST_POSTGRES`, else
/// `postgres://irkit:irkit@127.0.0.1:5432/irkit_test` (what
/// `scripts/start-postgres.sh` sets up).
pub struct ScratchSchema {
    base: String,
    /// The schema name.
    pub schema: String,
}

/// The test database URL (without a schema).
pub fn test_database_url() -> String {
    std::env::var("IRKIT_TEST_POSTGRES")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "postgres://irkit:irkit@127.0.0.1:5432/irkit_test".into())
}

/// A second test database whose default collation is ICU's `en-US`
/// (punctuation sorts apart from byte order): `$IRKIT_TEST_POSTGRES_ICU`,
/// else `irkit_test_icu` beside the default test database, as
/// `.ci/services/postgres.sh` creates it.
pub fn test_database_url_icu() -> String {
    std::env::var("IRKIT_TEST_POSTGRES_ICU")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "postgres://irkit:irkit@127.0.0.1:5432/irkit_test_icu".into())
}

impl ScratchSchema {
    /// Creates a fresh schema named `{tag}_{random}` in the test database
    /// ([`test_database_url`]). When the database is not reachable:
    /// `Ok(None)` after printing a skip message, or an error when
    /// `IRKIT_REQUIRE_POSTGRES=1` (CI, where PostgreSQL must run).
    pub fn create(tag: &str) -> Result<Option<ScratchSchema>, String> {
        ScratchSchema::create_in(test_database_url(), tag)
    }

    /// Like [`ScratchSchema::create`], in the database at `base`.
    pub fn create_in(base: String, tag: &str) -> Result<Option<ScratchSchema>, String> {
        let required = std::env::var("IRKIT_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
        let mut client = match parse_url(&base)
            .map_err(|e| e.to_string())
            .and_then(|mut t| {
                t.config.connect_timeout(std::time::Duration::from_secs(3));
                t.connect().map_err(|e| e.to_string())
            }) {
            Ok(c) => c,
            Err(e) if required => {
                return Err(format!(
                    "IRKIT_REQUIRE_POSTGRES=1 but PostgreSQL at {base} is not reachable: {e}"
                ));
            }
            Err(e) => {
                eprintln!(
                    "skipping PostgreSQL test {tag}: {base} not reachable ({e}); run scripts/start-postgres.sh"
                );
                return Ok(None);
            }
        };
        let schema = format!("{tag}_{}", &crate::ids::random_id("")[..16]).to_ascii_lowercase();
        client
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .map_err(|e| format!("CREATE SCHEMA {schema}: {e}"))?;
        Ok(Some(ScratchSchema { base, schema }))
    }

    /// The `--database` URL selecting this schema.
    pub fn url(&self) -> String {
        let sep = if self.base.contains('?') { '&' } else { '?' };
        format!("{}{sep}schema={}", self.base, self.schema)
    }

    /// A connection whose search path is this schema (a test holding locks
    /// or transactions of its own).
    pub fn connect(&self) -> Result<postgres::Client, String> {
        let t = parse_url(&self.url()).map_err(|e| e.to_string())?;
        t.connect().map_err(|e| e.to_string())
    }

    /// Runs SQL statements (no parameters) inside this schema.
    pub fn execute(&self, sql: &str) -> Result<(), String> {
        let t = parse_url(&self.url()).map_err(|e| e.to_string())?;
        let mut c = t.connect().map_err(|e| e.to_string())?;
        c.batch_execute(sql).map_err(|e| e.to_string())
    }

    /// The first column of the first row of `sql`, as text (`None`: no row or NULL).
    pub fn query_text(&self, sql: &str) -> Result<Option<String>, String> {
        let t = parse_url(&self.url()).map_err(|e| e.to_string())?;
        let mut c = t.connect().map_err(|e| e.to_string())?;
        let rows = c.simple_query(sql).map_err(|e| e.to_string())?;
        for m in rows {
            if let postgres::SimpleQueryMessage::Row(r) = m {
                return Ok(r.get(0).map(str::to_string));
            }
        }
        Ok(None)
    }
}

impl Drop for ScratchSchema {
    fn drop(&mut self) {
        if let Ok(t) = parse_url(&self.base)
            && let Ok(mut c) = t.connect()
        {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
        }
    }
}
