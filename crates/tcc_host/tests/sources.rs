//! Source lines in the dashboard (issue 35, `tcc_host::source`) on both
//! stores, PostgreSQL with two nodes (one registers and drives, the other
//! answers): the source kept beside an artifact outside its hash, the
//! execution page's location of the pc and of each history step, the
//! slots of a suspended execution, and the HTTP routes (register with
//! `{"artifact", "source"}`, `GET /v1/artifacts/{hash}/source`).

#[path = "common/db.rs"]
mod db;

use db::TestDb;
use serde_json::{Value as J, json};
use std::sync::Arc;
use std::time::Duration;
use tcc_host::source::{ArtifactSource, SourceStore};
use tcc_host::store::Store;
use tcc_host::{Host, HostConfig, Providers};

const SOURCE: &str = "@program\nasync def run(a):\n    greeting = \"hello\"\n    await effect(\"prep\")\n    await wait_for_event(\"go\")\n    return [a, greeting]\n";

fn span(line: u32) -> J {
    json!({"file": "greet.py", "start_line": line, "start_column": 4, "end_line": line, "end_column": 20})
}

/// `run(a)` of [`SOURCE`]: slot 0 is `a`, slot 1 `greeting`; an effect
/// `prep`, then a wait for event `go`; returns `[a, greeting]`. Spans
/// by line.
fn greet() -> Vec<u8> {
    let s = |v: &str| json!({"op": "LoadConst", "value": {"t": "string", "v": v}});
    let op = |o: &str| json!({"op": o});
    let ins = json!([
        s("hello"), {"op": "StoreLocal", "local": 1},
        s("prep"), op("Effect"), op("Pop"),
        s("go"), op("WaitForEvent"), op("Pop"),
        op("NewArray"), {"op": "LoadLocal", "local": 0}, op("ArrayPush"),
        {"op": "LoadLocal", "local": 1}, op("ArrayPush"), op("Return")
    ]);
    let spans = json!([
        span(3),
        span(3),
        span(4),
        span(4),
        J::Null,
        span(5),
        span(5),
        span(5),
        span(6),
        span(6),
        span(6),
        span(6),
        span(6),
        span(6)
    ]);
    let a = json!({
        "envelope": {
            "artifact_hash": "x", "engine_format_version": 1, "frontend_id": "irkit-tests",
            "frontend_version": "1", "language_semantics_version": "ts.subset.v1",
            "required_engine_features": ["ts.control_flow", "durable.effect", "durable.wait_for_event"],
            "required_host_capabilities": ["host.persist_checkpoint", "host.effect", "host.event"],
            "runtime_modules": []
        },
        "program": {"entry": 0, "functions": [{"id": 0, "name": "run", "param_count": 1,
            "local_count": 2, "instructions": ins, "spans": spans}]}
    });
    let mut art = tcc_ir::decode_artifact(a.to_string().as_bytes()).unwrap();
    art.envelope.artifact_hash = tcc_ir::compute_hash(&art);
    tcc_ir::encode_artifact(&art)
}

fn sources(store: &Arc<dyn Store>) -> &dyn SourceStore {
    tcc_host::source::store_of(&**store).expect("both stores keep sources")
}

fn greet_source() -> ArtifactSource {
    ArtifactSource {
        file: "greet.py".into(),
        text: SOURCE.into(),
    }
}

#[test]
fn a_source_is_kept_beside_its_artifact_outside_the_hash() {
    for db in TestDb::all("t_src_rows") {
        let store = db.open();
        let host = Host::new(store.clone(), Providers::echo_all(), HostConfig::default());
        let hash = host.register(&greet(), Some("greet")).unwrap();
        assert_eq!(sources(&store).get_source(&hash).unwrap(), None);
        // No artifact, no source.
        let err = sources(&store)
            .put_source("nope", &greet_source(), 1)
            .unwrap_err();
        assert!(
            matches!(err, tcc_host::store::StoreError::NotFound(_)),
            "{err}"
        );
        tcc_host::source::rows::put(&*store, &hash, &greet_source()).unwrap();
        assert_eq!(
            sources(&store).get_source(&hash).unwrap(),
            Some(greet_source())
        );
        // A newer text replaces it; the artifact (and its hash) stay.
        let newer = ArtifactSource {
            text: format!("{SOURCE}# a comment\n"),
            ..greet_source()
        };
        sources(&store).put_source(&hash, &newer, 2).unwrap();
        assert_eq!(sources(&store).get_source(&hash).unwrap(), Some(newer));
        assert_eq!(host.register(&greet(), None).unwrap(), hash);
        let stored = store.get_artifact(&hash).unwrap().unwrap();
        assert!(!String::from_utf8_lossy(&stored).contains("a comment"));
    }
}

fn until_status(host: &Host, id: &str, status: &str) {
    let row = host.wait_for(id, Duration::from_secs(30), true).unwrap();
    assert_eq!(row.status, status, "{row:?}");
}

#[test]
fn the_execution_page_shows_the_line_of_the_pc_of_each_step_and_the_slots() {
    for db in TestDb::all("t_src_page") {
        let (a, b) = db.nodes();
        let driver = Host::new(a.clone(), Providers::echo_all(), HostConfig::default());
        // The other node only answers the page.
        let viewer = Host::new(b.clone(), Providers::echo_all(), HostConfig::default());
        let hash = driver.register(&greet(), Some("greet")).unwrap();
        tcc_host::source::rows::put(&*a, &hash, &greet_source()).unwrap();
        let threads = driver.spawn();
        let id = driver
            .start("greet", vec![json!({"t": "number", "v": 5})], None)
            .unwrap();
        until_status(&driver, &id, "suspended");

        let doc = tcc_host::ui::execution_doc(&viewer, &id).unwrap().unwrap();
        assert_eq!(doc["source_file"], "greet.py");
        // The artifact was parsed once and kept for the next polls.
        assert_eq!(viewer.artifact_views().len(), 1);
        let again = tcc_host::ui::execution_doc(&viewer, &id).unwrap().unwrap();
        assert_eq!(again["source"], doc["source"]);
        assert_eq!(viewer.artifact_views().len(), 1);
        // Suspended just after WaitForEvent (pc 7): it stands at pc 6.
        let at = &doc["source"];
        assert_eq!(
            (at["pc"].as_u64(), at["line"].as_u64(), at["file"].as_str()),
            (Some(6), Some(5), Some("greet.py")),
            "{at}"
        );
        assert_eq!(at["text"], "    await wait_for_event(\"go\")");
        // The slots: the parameter and the local, with their values.
        let slots = &doc["slots"];
        assert_eq!(slots.as_array().map(Vec::len), Some(1), "{slots}");
        assert_eq!(slots[0]["function"], "run");
        assert_eq!(slots[0]["pc"], 7);
        assert_eq!(slots[0]["source"]["line"], 5);
        let values: Vec<(bool, J)> = slots[0]["slots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["param"].as_bool().unwrap(), s["value"]["plain"].clone()))
            .collect();
        assert_eq!(values, [(true, json!(5)), (false, json!("hello"))]);
        // Each step where it stood: the effect at its line, the
        // checkpoint that suspended at the wait's.
        let history = doc["history"].as_array().unwrap();
        let effect = history.iter().find(|e| e["kind"] == "effect").unwrap();
        assert_eq!(effect["source"]["line"], 4, "{effect}");
        assert_eq!(effect["source"]["text"], "    await effect(\"prep\")");
        let last = history
            .iter()
            .rev()
            .find(|e| e["kind"] == "checkpoint")
            .unwrap();
        assert_eq!(last["detail"]["status"], "suspended", "{last}");
        assert_eq!(last["source"]["line"], 5, "{last}");
        assert!(history[0].get("source").is_none(), "{}", history[0]);

        // The checkpoint entry records where it stood (its top frame).
        assert_eq!(
            (
                last["detail"]["func_id"].as_u64(),
                last["detail"]["pc"].as_u64()
            ),
            (Some(0), Some(7)),
            "{last}"
        );
        let suspended_at = last["detail"]["revision"].as_u64().unwrap();

        // Finished: no pc, no slots; every step keeps its line: the effect
        // by its key, the checkpoint that suspended by the frame its entry
        // recorded, also once the chain no longer holds its revision.
        b.send_event(&id, "go", &json!({"t": "null"})).unwrap();
        driver.notify();
        until_status(&driver, &id, "completed");
        driver.shutdown();
        for t in threads {
            t.join().unwrap();
        }
        let doc = tcc_host::ui::execution_doc(&viewer, &id).unwrap().unwrap();
        assert_eq!((&doc["source"], &doc["slots"]), (&J::Null, &J::Null));
        let lines: Vec<u64> = doc["history"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["source"]["line"].as_u64())
            .collect();
        assert!(lines.contains(&4), "{lines:?}");
        let waited = doc["history"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["kind"] == "checkpoint" && e["detail"]["revision"] == suspended_at)
            .unwrap();
        assert_eq!(waited["source"]["line"], 5, "{waited}");
        assert_eq!(waited["source"]["text"], "    await wait_for_event(\"go\")");
        // The events after it stand where it stood.
        let received = doc["history"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["kind"] == "event_received")
            .unwrap();
        assert_eq!(received["source"]["line"], 5, "{received}");
        let chain: Vec<u64> = b
            .load_checkpoints(&id)
            .unwrap()
            .iter()
            .map(|c| c.revision)
            .collect();
        // The completion's snapshot dropped the earlier checkpoints: the
        // wait's line above came from the entry's recorded frame.
        assert!(
            !chain.contains(&suspended_at),
            "chain after completion: {chain:?} (suspended at r{suspended_at})"
        );
    }
}

#[test]
fn without_a_source_the_page_has_lines_but_no_text() {
    for db in TestDb::all("t_src_none") {
        let store = db.open();
        let host = Host::new(store.clone(), Providers::echo_all(), HostConfig::default());
        host.register(&greet(), Some("greet")).unwrap();
        let threads = host.spawn();
        let id = host
            .start("greet", vec![json!({"t": "number", "v": 1})], None)
            .unwrap();
        until_status(&host, &id, "suspended");
        let doc = tcc_host::ui::execution_doc(&host, &id).unwrap().unwrap();
        host.shutdown();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(doc["source_file"], J::Null);
        assert_eq!(doc["source"]["line"], 5);
        assert!(doc["source"].get("text").is_none(), "{}", doc["source"]);
    }
}

/// The routes: register with the source, read it back, refusals.
#[test]
fn the_register_route_keeps_a_source_and_the_source_route_serves_it() {
    use tcc_host::service::{Service, ServiceConfig};
    for db in TestDb::all("t_src_api") {
        let store = db.open();
        let host = Host::new(store, Providers::echo_all(), HostConfig::default());
        // The last handle on the store is dropped here, after the service
        // (a PostgreSQL client may not be dropped inside its runtime).
        let svc = Service::start(
            "127.0.0.1:0",
            host.clone(),
            ServiceConfig {
                token: Some("t0ken".into()),
                ..ServiceConfig::default()
            },
        )
        .unwrap();
        let url = format!("http://{}", svc.addr());
        let call = |method: &str, path: &str, body: Option<&[u8]>, token: bool| {
            let mut headers = vec![("Content-Type", "application/json")];
            if token {
                headers.push(("Authorization", "Bearer t0ken"));
            }
            let r = tcc_host::http::request(
                method,
                &format!("{url}{path}"),
                &headers,
                body,
                Duration::from_secs(10),
            )
            .unwrap();
            let j: J = serde_json::from_slice(&r.body).unwrap();
            (r.status, j)
        };
        let artifact = greet();
        let mut body = b"{\"artifact\":".to_vec();
        body.extend_from_slice(&artifact);
        body.extend_from_slice(b",\"source\":");
        body.extend_from_slice(
            json!({"file": "greet.py", "text": SOURCE})
                .to_string()
                .as_bytes(),
        );
        body.push(b'}');
        let (c, j) = call("POST", "/v1/artifacts?name=greet", Some(&body), true);
        assert_eq!((c, j["source"].as_str()), (201, Some("greet.py")), "{j}");
        let hash = j["hash"].as_str().unwrap().to_string();
        let path = format!("/v1/artifacts/{hash}/source");
        assert_eq!(call("GET", &path, None, false).0, 401);
        let (c, j) = call("GET", &path, None, true);
        assert_eq!(c, 200, "{j}");
        assert_eq!(
            (j["file"].as_str(), j["text"].as_str(), j["hash"].as_str()),
            (Some("greet.py"), Some(SOURCE), Some(hash.as_str()))
        );
        // The same hash as the artifact registered alone.
        let (c, j) = call("POST", "/v1/artifacts", Some(&artifact), true);
        assert_eq!(
            (c, j["hash"].as_str(), &j["source"]),
            (201, Some(hash.as_str()), &J::Null)
        );
        // A source without an artifact, and a source the store cannot hold.
        let (c, j) = call("GET", "/v1/artifacts/nope/source", None, true);
        assert_eq!(
            (c, j["error"]["code"].as_str()),
            (404, Some("not_found")),
            "{j}"
        );
        let bad = [
            br#"{"artifact": {}, "source": {"file": "a.py", "text": "x"}}"#.to_vec(),
            {
                let mut b = b"{\"artifact\":".to_vec();
                b.extend_from_slice(&artifact);
                b.extend_from_slice(br#","source":{"file":"a\u0000.py","text":"x"}}"#);
                b
            },
            {
                let mut b = b"{\"artifact\":".to_vec();
                b.extend_from_slice(&artifact);
                b.extend_from_slice(br#","source":{"file":"","text":"x"}}"#);
                b
            },
        ];
        for body in bad {
            let (c, j) = call("POST", "/v1/artifacts?name=bad", Some(&body), true);
            assert!(c == 400 || c == 422, "{c} {j}");
        }
        svc.stop();
        drop(host);
    }
}

#[test]
fn parsed_artifacts_are_kept_by_hash_within_their_bounds() {
    use std::cell::Cell;
    use tcc_host::source::cache::ArtifactCache;
    let reads = Cell::new(0);
    let text = |n: u32| Some(format!("{{\"n\": {n}}}").into_bytes());
    let cache = ArtifactCache::new(2, 1 << 20);
    let get = |hash: &str, n: u32| {
        cache
            .get_or_parse(hash, || {
                reads.set(reads.get() + 1);
                Ok(text(n))
            })
            .unwrap()
            .unwrap()
    };
    assert_eq!(get("a", 1)["n"], 1);
    assert_eq!(get("a", 1)["n"], 1);
    assert_eq!(reads.get(), 1, "read once");
    get("b", 2);
    get("a", 1); // a is now the most recently used
    get("c", 3); // evicts b
    assert_eq!(cache.len(), 2);
    assert_eq!(reads.get(), 3);
    get("a", 1);
    assert_eq!(reads.get(), 3, "a was kept");
    get("b", 2);
    assert_eq!(reads.get(), 4, "b was evicted");
    // A missing artifact is not kept; text that is not JSON is corrupt.
    assert!(cache.get_or_parse("none", || Ok(None)).unwrap().is_none());
    assert!(
        cache
            .get_or_parse("bad", || Ok(Some(b"{".to_vec())))
            .is_err()
    );
    assert_eq!(cache.len(), 2);
    // The byte bound: an artifact larger than it is never kept.
    let small = ArtifactCache::new(8, 16);
    let big = format!("{{\"x\": \"{}\"}}", "y".repeat(32)).into_bytes();
    small.get_or_parse("big", || Ok(Some(big.clone()))).unwrap();
    assert!(small.is_empty());
    small
        .get_or_parse("s1", || Ok(Some(b"[1, 2, 3]".to_vec())))
        .unwrap();
    small
        .get_or_parse("s2", || Ok(Some(b"[4, 5, 6]".to_vec())))
        .unwrap();
    assert_eq!((small.len(), small.bytes()), (1, 9), "16 bytes hold one");
}
