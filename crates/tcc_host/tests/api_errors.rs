//! Every error kind of the HTTP API (`tcc_host::api_error::ErrorKind`),
//! produced by a real request to an in-process service: its status, its
//! API name (`error.code`) and its diagnostic code (`code`, the
//! `TCC-H2xx` rows of docs/diagnostics.md).

mod common;

use serde_json::{Value as J, json};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;
use tcc_host::api_error::ErrorKind;
use tcc_host::service::{Service, ServiceConfig};
use tcc_host::store::sqlite::SqliteStore;
use tcc_host::store::*;
use tcc_host::{Host, HostConfig, Providers};

/// A store that delegates to SQLite but provides no paged listing (the
/// trait's default: `unsupported`), as a store of an older build would.
struct NoPaging(SqliteStore);

impl Store for NoPaging {
    fn put_artifact(&self, hash: &str, body: &[u8]) -> Result<(), StoreError> {
        self.0.put_artifact(hash, body)
    }
    fn get_artifact(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get_artifact(hash)
    }
    fn set_program(&self, name: &str, hash: &str) -> Result<(), StoreError> {
        self.0.set_program(name, hash)
    }
    fn resolve_program(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.0.resolve_program(name)
    }
    fn programs(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.0.programs()
    }
    fn create_executions(&self, new: &[NewExecution]) -> Result<(), StoreError> {
        self.0.create_executions(new)
    }
    fn get_execution(&self, id: &str) -> Result<Option<ExecutionRow>, StoreError> {
        self.0.get_execution(id)
    }
    fn list_executions(&self, filter: &ListFilter) -> Result<Vec<ExecutionRow>, StoreError> {
        self.0.list_executions(filter)
    }
    fn history(&self, id: &str, after: i64, limit: u32) -> Result<Vec<HistoryRow>, StoreError> {
        self.0.history(id, after, limit)
    }
    fn claim(
        &self,
        id: &str,
        owner: &str,
        now: i64,
        lease_ms: i64,
    ) -> Result<Option<ExecutionRow>, StoreError> {
        self.0.claim(id, owner, now, lease_ms)
    }
    fn renew(&self, id: &str, owner: &str, now: i64, lease_ms: i64) -> Result<bool, StoreError> {
        self.0.renew(id, owner, now, lease_ms)
    }
    fn release(&self, id: &str, owner: &str) -> Result<(), StoreError> {
        self.0.release(id, owner)
    }
    fn load_checkpoints(&self, id: &str) -> Result<Vec<CheckpointRow>, StoreError> {
        self.0.load_checkpoints(id)
    }
    fn commit_checkpoint(&self, tx: CheckpointTx) -> Result<(), StoreError> {
        self.0.commit_checkpoint(tx)
    }
    fn journal_get(&self, key: &str) -> Result<Option<JournalRow>, StoreError> {
        self.0.journal_get(key)
    }
    fn journal_put(&self, row: &JournalRow) -> Result<(), StoreError> {
        self.0.journal_put(row)
    }
    fn journal_keys(&self, id: &str) -> Result<Vec<String>, StoreError> {
        self.0.journal_keys(id)
    }
    fn journal_of(&self, id: &str) -> Result<Vec<JournalRow>, StoreError> {
        self.0.journal_of(id)
    }
    fn attempts_of(&self, id: &str) -> Result<Vec<tcc_host::store::AttemptRow>, StoreError> {
        self.0.attempts_of(id)
    }
    fn find_work(&self, now: i64, limit: u32) -> Result<Vec<String>, StoreError> {
        self.0.find_work(now, limit)
    }
    fn next_timer_due(&self) -> Result<Option<i64>, StoreError> {
        self.0.next_timer_due()
    }
    fn ready_wake(&self, id: &str, now: i64) -> Result<Option<Wake>, StoreError> {
        self.0.ready_wake(id, now)
    }
    fn send_event_stored(
        &self,
        id: &str,
        name: &str,
        payload: &tcc_host::packed::Stored,
    ) -> Result<(), StoreError> {
        self.0.send_event_stored(id, name, payload)
    }
    fn request_cancel(&self, id: &str) -> Result<(), StoreError> {
        self.0.request_cancel(id)
    }
    fn resume_failed(&self, id: &str) -> Result<ResumeOutcome, StoreError> {
        self.0.resume_failed(id)
    }
    fn fail_execution(&self, id: &str, owner: &str, error: &str) -> Result<(), StoreError> {
        self.0.fail_execution(id, owner, error)
    }
    fn set_error(&self, id: &str, error: &str) -> Result<(), StoreError> {
        self.0.set_error(id, error)
    }
    fn append_history(&self, id: &str, kind: &str, detail: &J) -> Result<(), StoreError> {
        self.0.append_history(id, kind, detail)
    }
    fn reset_leases(&self) -> Result<u64, StoreError> {
        self.0.reset_leases()
    }
    fn release_owner(&self, owner: &str) -> Result<u64, StoreError> {
        self.0.release_owner(owner)
    }
    fn kv_get(&self, key: &str) -> Result<Option<J>, StoreError> {
        self.0.kv_get(key)
    }
    fn kv_set(&self, key: &str, value: &J) -> Result<(), StoreError> {
        self.0.kv_set(key, value)
    }
}

/// `(status, body)` of one request (`token`: the bearer token to send).
fn call(base: &str, method: &str, path: &str, body: Option<&[u8]>, token: bool) -> (u16, J) {
    let mut headers = vec![("content-type", "application/json")];
    if token {
        headers.push(("authorization", "Bearer t0ken"));
    }
    call_with(base, method, path, body, &headers)
}

/// `(status, body)` of one request with these headers.
fn call_with(
    base: &str,
    method: &str,
    path: &str,
    body: Option<&[u8]>,
    headers: &[(&str, &str)],
) -> (u16, J) {
    let r = tcc_host::http::request(
        method,
        &format!("{base}{path}"),
        headers,
        body,
        Duration::from_secs(10),
    )
    .unwrap();
    (r.status, serde_json::from_slice(&r.body).unwrap())
}

#[test]
fn every_error_kind_answers_with_its_status_name_and_code() {
    let dir = std::env::temp_dir().join(tcc_host::random_id("tcc-api-errors-"));
    std::fs::create_dir_all(&dir).unwrap();
    let store = Arc::new(NoPaging(SqliteStore::open(&dir.join("t.db")).unwrap()));
    let host = Host::new(
        store.clone(),
        Providers::echo_all(),
        HostConfig {
            workers: 1,
            ..HostConfig::default()
        },
    );
    let cfg = ServiceConfig {
        token: Some("t0ken".into()),
        tokens: tcc_host::namespace::TokenSet::parse("acme,globex t0ken-ag\n").unwrap(),
        max_body: 64 << 10,
        request_timeout: Duration::from_millis(500),
        ..ServiceConfig::default()
    };
    let service = Service::start("127.0.0.1:0", host.clone(), cfg).unwrap();
    let base = format!("http://{}", service.addr());
    let u = base.as_str();
    let flow = common::flow();
    let (c, j) = call(u, "POST", "/v1/artifacts?name=flow", Some(&flow), true);
    assert_eq!(c, 201, "{j}");
    // A stored artifact that is not JSON (written around the host).
    store.put_artifact("broken", b"\xff not json").unwrap();
    let started = json!({"program": "flow", "id": "e1"}).to_string();
    let (c, j) = call(u, "POST", "/v1/executions", Some(started.as_bytes()), true);
    assert_eq!(c, 201, "{j}");

    let mut seen = Vec::new();
    let mut check = |(c, j): (u16, J), kind: ErrorKind| {
        assert_eq!(
            (c, j["code"].as_str(), j["error"]["code"].as_str()),
            (kind.status(), Some(kind.code()), Some(kind.api_code())),
            "{j}"
        );
        assert!(
            j["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
        seen.push(kind);
    };
    check(
        call(u, "POST", "/v1/executions", Some(b"{"), true),
        ErrorKind::BadRequest,
    );
    check(
        call(u, "GET", "/v1/executions", None, false),
        ErrorKind::Unauthorized,
    );
    check(
        call(u, "GET", "/v1/executions/nope", None, true),
        ErrorKind::NotFound,
    );
    check(
        call(
            u,
            "POST",
            "/v1/executions",
            Some(br#"{"program":"nope"}"#),
            true,
        ),
        ErrorKind::UnknownProgram,
    );
    check(
        call(u, "POST", "/v1/executions", Some(started.as_bytes()), true),
        ErrorKind::Conflict,
    );
    check(
        call(
            u,
            "POST",
            "/v1/executions",
            Some(&vec![b' '; 100 << 10]),
            true,
        ),
        ErrorKind::PayloadTooLarge,
    );
    check(
        call(u, "POST", "/v1/artifacts", Some(b"{\"envelope\": 1}"), true),
        ErrorKind::InvalidArtifact,
    );
    check(
        call(u, "GET", "/v1/artifacts/broken", None, true),
        ErrorKind::Internal,
    );
    check(
        call(u, "GET", "/ui/api/executions", None, true),
        ErrorKind::Unsupported,
    );
    // A body that never finishes arriving.
    let mut tcp = std::net::TcpStream::connect(service.addr()).unwrap();
    tcp.write_all(
        b"POST /v1/executions HTTP/1.1\r\nhost: x\r\nauthorization: Bearer t0ken\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{",
    )
    .unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") || !answer.ends_with(b"}") {
        let n = tcp.read(&mut buf).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&answer));
        answer.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
    check(
        (status, serde_json::from_str(body).unwrap()),
        ErrorKind::Timeout,
    );

    let auth = ("authorization", "Bearer t0ken");
    check(
        call_with(
            u,
            "POST",
            "/v1/executions",
            Some(started.as_bytes()),
            &[
                auth,
                ("content-type", "application/json"),
                ("origin", "http://attacker.example"),
            ],
        ),
        ErrorKind::Forbidden,
    );
    check(
        call_with(
            u,
            "POST",
            "/v1/executions",
            Some(started.as_bytes()),
            &[auth, ("content-type", "text/plain")],
        ),
        ErrorKind::UnsupportedMediaType,
    );
    // An operator's resume of an execution that has not failed.
    check(
        call(u, "POST", "/v1/executions/e1/resume", None, true),
        ErrorKind::NotResumable,
    );
    // A token not scoped to the namespace named; one of several
    // namespaces that names none (issue 35, namespaces).
    let scoped = ("authorization", "Bearer t0ken-ag");
    check(
        call_with(
            u,
            "GET",
            "/v1/executions",
            None,
            &[scoped, ("tcc-namespace", "initech")],
        ),
        ErrorKind::NamespaceForbidden,
    );
    check(
        call_with(u, "GET", "/v1/executions", None, &[scoped]),
        ErrorKind::NamespaceRequired,
    );

    assert_eq!(seen, ErrorKind::ALL);
    service.stop();
    host.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The service refuses to start with a typed error whose message names
/// the cause (the CLI prints it as a usage error).
#[test]
fn a_service_that_cannot_start_says_why() {
    use tcc_host::service::ServiceError;
    let dir = std::env::temp_dir().join(tcc_host::random_id("tcc-api-start-"));
    std::fs::create_dir_all(&dir).unwrap();
    let store = Arc::new(SqliteStore::open(&dir.join("t.db")).unwrap());
    let host = Host::new(store, Providers::echo_all(), HostConfig::default());
    let start = |listen: &str, token: Option<&str>| {
        let cfg = ServiceConfig {
            token: token.map(str::to_string),
            ..ServiceConfig::default()
        };
        Service::start(listen, host.clone(), cfg).err().unwrap()
    };
    let e = start("localhost", None);
    assert!(matches!(e, ServiceError::Address { .. }), "{e:?}");
    assert!(e.to_string().contains("expected IP:PORT"), "{e}");
    let e = start("0.0.0.0:0", None);
    assert!(matches!(e, ServiceError::NoToken { .. }), "{e:?}");
    assert!(e.to_string().contains("without a bearer token"), "{e}");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let e = start(&taken.local_addr().unwrap().to_string(), None);
    assert!(matches!(e, ServiceError::Listen { .. }), "{e:?}");
    assert!(std::error::Error::source(&e).is_some());
    let _ = std::fs::remove_dir_all(&dir);
}
