//! Issue 42 with real `irkit tcc serve` processes on loopback: a program
//! that used to abort every node taking it over runs to its end across a
//! node crash and a restart on PostgreSQL; a drive that crashes its node
//! every time is quarantined after a few restarts; the token comes from a
//! file, and a token given as an argument is warned about.

#[path = "../../tcc_host/tests/common/programs.rs"]
mod programs;
#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use serde_json::Value as J;
use std::path::Path;
use std::time::{Duration, Instant};
use tcc_serve::{Dir, Server, request};

fn write_providers(dir: &Path) {
    std::fs::write(
        dir.join("providers.toml"),
        "[[route]]\npattern = \"*\"\nprovider = \"echo\"\n",
    )
    .unwrap();
}

fn json(url: &str, method: &str, path: &str, body: Option<&[u8]>) -> (u16, J) {
    let (status, body) = request(url, method, path, body, None).unwrap();
    (status, serde_json::from_slice(&body).unwrap_or(J::Null))
}

/// Polls the execution until `done` holds for its status JSON (20 s at most).
fn wait_for(url: &str, id: &str, done: impl Fn(&J) -> bool) -> J {
    let start = Instant::now();
    loop {
        if let Ok((200, body)) = request(url, "GET", &format!("/v1/executions/{id}"), None, None) {
            let j: J = serde_json::from_slice(&body).unwrap();
            if done(&j) {
                return j;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {id}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (20 s at most) until `id` has checkpointed with `status`, reading
/// its history (the status route would answer a completed execution's
/// result: a read of its own, measured apart in the F3 tests).
fn wait_for_checkpoint(url: &str, id: &str, status: &str) {
    let start = Instant::now();
    loop {
        let path = format!("/v1/executions/{id}/history");
        if let Ok((200, body)) = request(url, "GET", &path, None, None) {
            let j: J = serde_json::from_slice(&body).unwrap();
            let reached = j["history"].as_array().is_some_and(|entries| {
                entries
                    .iter()
                    .any(|e| e["kind"] == "checkpoint" && e["detail"]["status"] == status)
            });
            if reached {
                return;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {id} to checkpoint {status}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (20 s at most) until the process has exited.
fn exited(s: &mut Server) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if s.child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Two nodes on one PostgreSQL: node A dies inside the deep-equality
/// program's first effect; node B takes the execution over and runs the
/// comparison of two lists nested 100 000 deep (which aborted every node
/// before); A restarts and stays up.
#[test]
fn f1_two_postgres_nodes_survive_the_deep_equality_program_and_a_restart() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_f1").unwrap() else {
        return;
    };
    let d = Dir::new("irkit-tcc-f1-");
    write_providers(&d.0);
    let db = schema.url();
    let providers = d.0.join("providers.toml");
    let node = |name: &str, crash: Option<&str>| {
        tcc_serve::serve(
            &db,
            &providers,
            &["--node-id", name, "--lease-ms", "400"],
            &[("TCC_CRASH_AT", crash)],
            None,
        )
    };
    let mut a = node("a", Some("after_effect_provider"));
    let art = programs::nested_equal(100_000.0);
    let (c, j) = json(&a.url, "POST", "/v1/artifacts?name=deep", Some(&art));
    assert_eq!(c, 201, "{j}");
    let (c, j) = json(
        &a.url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "deep", "id": "deep-1"}"#),
    );
    assert_eq!(c, 201, "{j}");
    assert!(exited(&mut a), "node a did not reach its crash hook");
    let mut b = node("b", None);
    let done = wait_for(&b.url, "deep-1", |j| j["status"] != "runnable");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], serde_json::json!({"t": "bool", "v": true}));
    let mut a = node("a", None);
    let (c, _) = json(&a.url, "GET", "/v1/health", None);
    assert_eq!(c, 200);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        a.child.try_wait().unwrap().is_none(),
        "node a died after its restart"
    );
    assert!(b.child.try_wait().unwrap().is_none(), "node b died");
}

/// A drive that aborts its node every time (a crash hook before the
/// provider call, hit again after each restart) is failed as quarantined
/// after `--max-drive-attempts` crashes, and the node then stays up.
#[test]
fn a_drive_that_crashes_its_node_on_every_restart_is_quarantined() {
    let d = Dir::new("irkit-tcc-poison-");
    write_providers(&d.0);
    let db = d.0.join("host.db").to_string_lossy().into_owned();
    let providers = d.0.join("providers.toml");
    let node = || {
        tcc_serve::serve(
            &db,
            &providers,
            &["--max-drive-attempts", "2"],
            &[("TCC_CRASH_AT", Some("before_effect_provider"))],
            None,
        )
    };
    let mut s = node();
    let art = programs::one_effect("k");
    let (c, j) = json(&s.url, "POST", "/v1/artifacts?name=poison", Some(&art));
    assert_eq!(c, 201, "{j}");
    // The start commits the execution before any drive; the drive it wakes
    // may crash the node before the answer is written, so a connection
    // closed early is accepted when the node is gone.
    match request(
        &s.url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "poison", "id": "p-1"}"#),
        None,
    ) {
        Ok((c, body)) => assert_eq!(c, 201, "{}", String::from_utf8_lossy(&body)),
        Err(e) => assert!(exited(&mut s), "the start failed but the node lives: {e}"),
    }
    // Each node either crashes in the drive or, past the limit, fails the
    // execution as quarantined and stays up.
    let mut crashes = 0;
    loop {
        let start = Instant::now();
        let crashed = loop {
            if s.child.try_wait().unwrap().is_some() {
                break true;
            }
            if let Ok((200, j)) = request(&s.url, "GET", "/v1/executions/p-1", None, None)
                && serde_json::from_slice::<J>(&j).unwrap()["status"] == "failed"
            {
                break false;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "neither crashed nor failed"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        if !crashed {
            break;
        }
        crashes += 1;
        assert!(crashes <= 2, "crashed {crashes} times");
        s = node();
    }
    assert_eq!(crashes, 2);
    let failed = wait_for(&s.url, "p-1", |j| j["status"] == "failed");
    let error = failed["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("quarantined") && error.contains("2 drives in a row"),
        "{failed}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(s.child.try_wait().unwrap().is_none(), "the node died again");
}

/// `--token-file` sets the token without putting it on the command line;
/// `--token` still works, with a warning in the log.
#[test]
fn f8_the_token_comes_from_a_file_and_an_argument_token_is_warned_about() {
    let d = Dir::new("irkit-tcc-secret-");
    write_providers(&d.0);
    let db = d.0.join("host.db").to_string_lossy().into_owned();
    let providers = d.0.join("providers.toml");
    let token_file = d.0.join("token");
    std::fs::write(&token_file, "s3cret-from-file\n").unwrap();
    let log = d.0.join("serve.log");
    let s = tcc_serve::serve(
        &db,
        &providers,
        &["--token-file", &token_file.to_string_lossy()],
        &[],
        Some(&log),
    );
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", s.child.id())).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains("s3cret"));
    let (c, _) = request(&s.url, "GET", "/v1/executions", None, None).unwrap();
    assert_eq!(c, 401);
    let (c, _) = request(
        &s.url,
        "GET",
        "/v1/executions",
        None,
        Some("s3cret-from-file"),
    )
    .unwrap();
    assert_eq!(c, 200);
    drop(s);
    assert!(
        !std::fs::read_to_string(&log)
            .unwrap()
            .contains("visible to every local user")
    );
    let s = tcc_serve::serve(&db, &providers, &["--token", "s3cret-arg"], &[], Some(&log));
    let (c, _) = request(&s.url, "GET", "/v1/executions", None, Some("s3cret-arg")).unwrap();
    assert_eq!(c, 200);
    drop(s);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("--token is visible to every local user"),
        "{text}"
    );
    assert!(!text.contains("s3cret-arg"), "{text}");
}

/// The server's peak resident memory (VmHWM) in bytes.
#[cfg(target_os = "linux")]
/// Restarts the process's peak RSS from its current RSS (Linux
/// `clear_refs`), so that an earlier peak (the server's start, a warm-up)
/// hides nothing measured after.
fn reset_peak(pid: u32) {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").unwrap();
}

fn peak_rss(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kb * 1024
}

/// F3: one request's peak memory stays within 20× its body. An 8 MiB
/// start body of zeros in `args` (4.2 M values) took the server to 6.67 GB
/// before; it is now refused (413) after a count that builds nothing. A
/// start of 8 MiB of long strings is taken, converted to its stored text
/// without a tree, stored and driven to its end. The bound is the issue's
/// goal; the figures measured are about 3× and 13×
/// (`scripts/tcc-rss.sh`).
#[cfg(target_os = "linux")]
#[test]
fn f3_peak_memory_of_a_large_request_stays_within_twenty_times_its_body() {
    let d = Dir::new("irkit-tcc-rss-");
    write_providers(&d.0);
    let db = d.0.join("host.db").to_string_lossy().into_owned();
    let providers = d.0.join("providers.toml");
    let s = tcc_serve::serve(&db, &providers, &["--max-body", "9437184"], &[], None);
    let (c, j) = json(
        &s.url,
        "POST",
        "/v1/artifacts?name=p",
        Some(&programs::one_effect("k")),
    );
    assert_eq!(c, 201, "{j}");
    let ended = |j: &J| j["status"] == "completed" || j["status"] == "failed";
    // Warm: threads, caches and allocator arenas touched by a small start.
    let (c, j) = json(
        &s.url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "p", "args": [[0, "x", {"k": 1}]]}"#),
    );
    assert_eq!(c, 201, "{j}");
    wait_for(&s.url, j["id"].as_str().unwrap(), ended);
    let zeros = format!(
        r#"{{"program": "p", "args": [[{}0]]}}"#,
        "0,".repeat(4_200_000)
    );
    let long = "x".repeat(2 << 20);
    let strings =
        format!(r#"{{"program": "p", "args": [["{long}", "{long}", "{long}", "{long}"]]}}"#);
    for (name, body, expected) in [("zeros", zeros, 413), ("strings", strings, 201)] {
        reset_peak(s.child.id());
        let before = peak_rss(s.child.id());
        let (c, j) = json(&s.url, "POST", "/v1/executions", Some(body.as_bytes()));
        assert_eq!(c, expected, "{name}: {j}");
        if c == 201 {
            wait_for(&s.url, j["id"].as_str().unwrap(), ended);
        }
        let grew = peak_rss(s.child.id()).saturating_sub(before);
        assert!(
            grew <= 20 * body.len(),
            "{name}: peak RSS grew by {grew} bytes for a body of {} bytes",
            body.len()
        );
    }
}

/// F3 for the paths that kept trees after the start route lost its own
/// (measured on main a9e3773: an event of 99 990 zeros 876× its body, its
/// read 501×, a resume 842×). An event payload delivered to a waiting
/// execution (the stored payload absorbed from its text; the checkpoint
/// and the result written as text), then, on a fresh server over the same
/// database, each execution read back (`GET`: the stored result answered
/// as its text, its plain form written from it), and an execution started
/// with 99 990 zeros as its argument resumed from its stored checkpoint by
/// an event (the heap read from the checkpoint's text). Values of large
/// strings and every read stay within the issue's 20× their body. A body
/// of 99 990 tiny values (whose heap alone is 8× the body) measured
/// 16–18× since the delta base keeps a digest of the heap instead of a
/// copy, long arrays are allocated at their counted length, and a long
/// request value is deflated as it is converted (see docs/tcc/host.md,
/// Memory per request); its bound, `TINY_VALUES_BOUND`, leaves room above
/// the goal for the allocator's variance between machines (23–26× and a
/// bound of 60× before; 32–37× and 100× before long texts were deflated as
/// written and absorbed as inflated; 100–126× and 200× before SQLite kept
/// long texts deflated; 163–249× and 300× before the allocators were
/// tuned).
#[cfg(target_os = "linux")]
#[test]
fn f3_an_event_a_resume_and_a_read_stay_within_twenty_times_their_body() {
    const TINY_VALUES_BOUND: usize = 25;
    let d = Dir::new("irkit-tcc-rss-event-");
    write_providers(&d.0);
    let db = d.0.join("host.db").to_string_lossy().into_owned();
    let providers = d.0.join("providers.toml");
    let serve = || tcc_serve::serve(&db, &providers, &["--max-body", "9437184"], &[], None);
    // Measured requests are waited for through the history: the status
    // route would read the stored result back inside the measurement.
    let start = |s: &Server, body: &[u8]| {
        let (c, j) = json(&s.url, "POST", "/v1/executions", Some(body));
        assert_eq!(c, 201, "{j}");
        let id = j["id"].as_str().unwrap().to_string();
        wait_for_checkpoint(&s.url, &id, "suspended");
        id
    };
    let event = |s: &Server, id: &str, body: &[u8]| {
        let path = format!("/v1/executions/{id}/events");
        let (c, j) = json(&s.url, "POST", &path, Some(body));
        assert_eq!(c, 202, "{j}");
        wait_for_checkpoint(&s.url, id, "completed");
    };
    let completed = |s: &Server, id: &str| wait_for(&s.url, id, |j: &J| j["status"] == "completed");
    let small_event = br#"{"name": "ev", "payload": [1, "x"]}"#;
    let small_start = br#"{"program": "p", "args": [[0, "x", {"k": 1}]]}"#;
    // Threads, caches and allocator arenas touched by a small cycle.
    let warm = |s: &Server| {
        let id = start(s, small_start);
        event(s, &id, small_event);
    };
    let zeros = format!("[{}0]", "0,".repeat(99_989));
    let zeros_event = format!(r#"{{"name": "ev", "payload": {zeros}}}"#);
    let zeros_start = format!(r#"{{"program": "p", "args": [{zeros}]}}"#);
    let long = "y".repeat(2 << 20);
    let strings_event =
        format!(r#"{{"name": "ev", "payload": ["{long}", "{long}", "{long}", "{long}"]}}"#);
    // The peak growth of `s` since `before`, within `times` × `body`.
    let within = |what: &str, before: usize, s: &Server, body: usize, times: usize| {
        let grew = peak_rss(s.child.id()).saturating_sub(before);
        eprintln!(
            "{what}: peak RSS grew {:.1}x the body (bound {times}x)",
            grew as f64 / body as f64
        );
        assert!(
            grew <= times * body,
            "{what}: peak RSS grew by {grew} bytes for a body of {body} bytes (bound {times}x)"
        );
    };
    let measure = |s: &Server| {
        reset_peak(s.child.id());
        peak_rss(s.child.id())
    };

    let s = serve();
    let (c, j) = json(
        &s.url,
        "POST",
        "/v1/artifacts?name=p",
        Some(&programs::arg_and_event("ev")),
    );
    assert_eq!(c, 201, "{j}");
    warm(&s);
    let (tiny, strings) = (start(&s, small_start), start(&s, small_start));
    let before = measure(&s);
    event(&s, &tiny, zeros_event.as_bytes());
    within(
        "zeros event",
        before,
        &s,
        zeros_event.len(),
        TINY_VALUES_BOUND,
    );
    let done = completed(&s, &tiny);
    assert_eq!(
        done["result_plain"][1].as_array().map(Vec::len),
        Some(99_990)
    );
    let before = measure(&s);
    event(&s, &strings, strings_event.as_bytes());
    within("strings event", before, &s, strings_event.len(), 20);
    // Not measured here: its start (tcc-rss.sh measures it).
    let resumed = start(&s, zeros_start.as_bytes());
    drop(s);

    let s = serve();
    warm(&s);
    // A read holds the answer (the stored text inflated into it) and the
    // result's plain form: within 20× the body for long strings, and 2×
    // the answer for tiny values (whose stored text is 10.5× their body;
    // measured 1.05×, 5× before the answer was sent in parts).
    for (id, body, strings) in [
        (&tiny, zeros_event.len(), false),
        (&strings, strings_event.len(), true),
    ] {
        let before = measure(&s);
        let (c, answer) =
            request(&s.url, "GET", &format!("/v1/executions/{id}"), None, None).unwrap();
        assert_eq!(c, 200);
        match strings {
            true => within("GET", before, &s, body, 20),
            false => within("GET", before, &s, answer.len(), 2),
        }
        let j: J = serde_json::from_slice(&answer).unwrap();
        assert_eq!(j["result"]["v"][1]["t"], "array");
    }
    let before = measure(&s);
    event(&s, &resumed, small_event);
    within("resume", before, &s, zeros_start.len(), TINY_VALUES_BOUND);
    let done = completed(&s, &resumed);
    assert_eq!(
        done["result_plain"][0].as_array().map(Vec::len),
        Some(99_990)
    );
}
