//! Pause and resume (issue 35) over both stores, driven by hand (no
//! scheduler thread, no clock waited for: a timer "comes due" by moving
//! its due time in the database). On PostgreSQL the pausing node and the
//! driving node are two stores on one database, and a reopened store
//! stands for a restart.

mod common;
#[path = "common/db.rs"]
mod db;
use db::TestDb;

use serde_json::json;
use std::sync::Arc;
use tcc_host::pause::{PauseState, PauseStore};
use tcc_host::providers::Providers;
use tcc_host::store::{Store, StoreError};
use tcc_host::{Host, HostConfig};

fn host(store: &Arc<dyn Store>, owner: &str) -> Arc<Host> {
    let cfg = HostConfig {
        owner: owner.into(),
        ..HostConfig::default()
    };
    Host::new(store.clone(), Providers::echo_all(), cfg)
}

/// Sleeps an hour, then returns 1.
fn sleeper() -> Vec<u8> {
    common::artifact(&[(
        "run",
        0,
        0,
        json!([
            {"op": "LoadConst", "value": {"t": "number", "v": 3_600_000.0}}, {"op": "Sleep"}, {"op": "Pop"},
            {"op": "LoadConst", "value": {"t": "number", "v": 1.0}}, {"op": "Return"}
        ]),
    )])
}

fn pauses(store: &Arc<dyn Store>) -> &dyn PauseStore {
    tcc_host::pause::store_of(&**store).expect("the store keeps pauses")
}

fn work(store: &Arc<dyn Store>, now: i64) -> Vec<String> {
    store.find_work(now, 100).unwrap()
}

fn status(store: &Arc<dyn Store>, id: &str) -> String {
    store.get_execution(id).unwrap().unwrap().status
}

const LATER: i64 = i64::MAX / 4;

#[test]
fn a_paused_program_holds_its_executions_and_their_due_timers_fire_on_resume() {
    for db in TestDb::all("t_pause_program") {
        let (a, b) = db.nodes();
        let (node_a, node_b) = (host(&a, "node-a"), host(&b, "node-b"));
        node_a.register(&sleeper(), Some("nap")).unwrap();
        let first = node_a.start("nap", vec![], Some("first".into())).unwrap();
        assert!(node_b.drive(&first).unwrap());
        assert_eq!(status(&a, &first), "suspended");

        // Node A pauses the program; its timer comes due meanwhile.
        assert!(tcc_host::pause::set_program(&node_a, "nap", true).unwrap());
        assert!(!tcc_host::pause::set_program(&node_a, "nap", true).unwrap());
        db.sql("UPDATE waits SET due_ms = 1 WHERE kind = 'timer'");
        // Started while paused: accepted, held.
        let second = node_b.start("nap", vec![], Some("second".into())).unwrap();
        assert_eq!(status(&b, &second), "runnable");
        for store in [&a, &b] {
            assert!(work(store, LATER).is_empty());
            assert_eq!(store.next_timer_due().unwrap(), None);
            assert_eq!(pauses(store).paused_programs().unwrap(), ["nap"]);
            assert_eq!(
                pauses(store).pause_state(&second).unwrap(),
                Some(PauseState {
                    execution: false,
                    program: true
                })
            );
        }
        assert!(
            !node_b.drive(&first).unwrap(),
            "a paused execution is claimed"
        );
        assert!(
            !node_a.drive(&second).unwrap(),
            "a paused execution is claimed"
        );
        // A restarted node (a reopened store) still holds them.
        let (a2, _) = db.nodes();
        assert!(work(&a2, LATER).is_empty());
        assert!(!host(&a2, "node-a").drive(&second).unwrap());

        // Node B resumes the program: both run, the due timer fires.
        assert!(tcc_host::pause::set_program(&node_b, "nap", false).unwrap());
        let mut ready = work(&a, LATER);
        ready.sort();
        assert_eq!(ready, ["first", "second"]);
        assert_eq!(a.next_timer_due().unwrap(), Some(1));
        assert!(node_a.drive(&first).unwrap());
        assert_eq!(status(&a, &first), "completed");
        let history = a.history(&first, 0, 100).unwrap();
        assert!(
            history.iter().any(|h| h.kind == "timer_delivered"),
            "{history:?}"
        );
        assert!(node_a.drive(&second).unwrap());
        assert_eq!(status(&a, &second), "suspended");
        assert!(pauses(&a).paused_programs().unwrap().is_empty());
    }
}

#[test]
fn a_paused_execution_is_held_until_resumed_and_only_an_unfinished_one_pauses() {
    for db in TestDb::all("t_pause_exec") {
        let (a, b) = db.nodes();
        let (node_a, node_b) = (host(&a, "node-a"), host(&b, "node-b"));
        node_a.register(&common::waiter(), Some("wait")).unwrap();
        node_a.register(&sleeper(), Some("nap")).unwrap();
        let held = node_a.start("wait", vec![], Some("held".into())).unwrap();
        let other = node_a.start("wait", vec![], Some("other".into())).unwrap();
        assert!(tcc_host::pause::set_execution(&node_a, &held, true).unwrap());
        assert!(!tcc_host::pause::set_execution(&node_a, &held, true).unwrap());
        assert_eq!(work(&b, LATER), std::slice::from_ref(&other));
        assert!(!node_b.drive(&held).unwrap());
        assert!(node_b.drive(&other).unwrap());
        // An event sent meanwhile is kept for it.
        b.send_event(&held, "never", &json!({"t": "number", "v": 5.0}))
            .unwrap();
        assert!(work(&b, LATER).is_empty());
        let entries = a.history(&held, 0, 100).unwrap();
        assert!(entries.iter().any(|h| h.kind == "paused"), "{entries:?}");

        // Resumed on the other node: it runs and takes its event.
        assert!(tcc_host::pause::set_execution(&node_b, &held, false).unwrap());
        assert!(!tcc_host::pause::set_execution(&node_b, &held, false).unwrap());
        assert_eq!(work(&a, LATER), std::slice::from_ref(&held));
        assert!(node_a.drive(&held).unwrap());
        assert_eq!(status(&a, &held), "completed");
        let entries = a.history(&held, 0, 100).unwrap();
        assert!(entries.iter().any(|h| h.kind == "unpaused"), "{entries:?}");

        // Terminal: refused; unknown: not found.
        let e = tcc_host::pause::set_execution(&node_a, &held, true).unwrap_err();
        assert!(matches!(e, StoreError::Conflict(_)), "{e:?}");
        let e = tcc_host::pause::set_execution(&node_a, "nope", true).unwrap_err();
        assert!(matches!(e, StoreError::NotFound(_)), "{e:?}");

        // One execution paused, its program resumed: still held (and the
        // other way round).
        let nap = node_a.start("nap", vec![], Some("nap1".into())).unwrap();
        tcc_host::pause::set_execution(&node_a, &nap, true).unwrap();
        tcc_host::pause::set_program(&node_a, "nap", true).unwrap();
        tcc_host::pause::set_program(&node_b, "nap", false).unwrap();
        assert!(work(&b, LATER).is_empty());
        tcc_host::pause::set_program(&node_a, "nap", true).unwrap();
        tcc_host::pause::set_execution(&node_b, &nap, false).unwrap();
        assert!(work(&b, LATER).is_empty());
        assert!(tcc_host::pause::held(&*b, &nap).unwrap());
        tcc_host::pause::set_program(&node_b, "nap", false).unwrap();
        assert_eq!(work(&b, LATER), [nap]);
    }
}
