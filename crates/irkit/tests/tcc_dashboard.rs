//! The dashboard (`/ui` of `irkit tcc serve`, issue 27) in headless
//! Chromium, on SQLite and on PostgreSQL: sign in with the token, start a
//! workflow through the API, see its lease held by the node while an
//! effect runs (on PostgreSQL, two nodes share the database and either
//! may drive it), watch it suspend on an event wait (pc highlighted in the
//! program listing), send the event from the page, see it complete
//! without a reload (timeline with effects, checkpoints, timer, event and
//! child), then the list (status, program and id search), the namespace
//! picker (an execution and a program in namespace `acme` shown only when
//! `acme` is chosen, hidden under `default`, both under "all"), the programs
//! page, the schedules page (a paused schedule resumed by its button), and an
//! execution failed by an effect resumed by the Resume button, a program
//! registered from its Python source by `irkit tcc register` showing the
//! source line at its pc (highlighted in its text), each history step's
//! line and its slots' values, and a waiting execution paused and resumed
//! by its Pause and Resume buttons. The screenshot of the finished execution must not be blank; with
//! `IRKIT_BLESS=1` the SQLite run writes it to `docs/tcc/dashboard.png`, and the
//! suspended Python program's page to `docs/tcc/dashboard-source.png`.
//!
//! The browser is the `browser` crate's (chromedriver and Chromium from
//! `IRKIT_CHROMEDRIVER` / `IRKIT_CHROMIUM`, else `PATH`); the form is
//! filled and submitted through WebDriver's element commands.
//!
//! Skips only when no browser is available here
//! ([`browser::BrowserError::is_unavailable`]) and `IRKIT_REQUIRE_BROWSER`
//! is unset (CI sets it), and the PostgreSQL half when PostgreSQL is not
//! reachable and `IRKIT_REQUIRE_POSTGRES` is unset.

#[path = "../../tcc_host/tests/common/mod.rs"]
mod common;
#[path = "common/tcc_serve.rs"]
mod tcc_serve;

use browser::{Browser, Options};
use serde_json::{Value as J, json};
use std::path::Path;
use std::time::{Duration, Instant};
use tcc_serve::{Dir, request};

const TOKEN: &str = "ui-s3cret";

/// One browser at a time (CI has two cores).
static ONE_BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn api(url: &str, method: &str, path: &str, body: Option<&[u8]>) -> (u16, J) {
    let (code, body) = request(url, method, path, body, Some(TOKEN)).unwrap();
    let j = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("non-JSON {e}: {}", String::from_utf8_lossy(&body)));
    (code, j)
}

/// Starts the headless browser with a `width` × `height` window. `None`
/// (the reason printed) only when no browser is available and
/// `IRKIT_REQUIRE_BROWSER` is unset; any other failure fails the test.
fn start_browser(width: u32, height: u32) -> Option<Browser> {
    let options = Options {
        width,
        height,
        ..Options::default()
    };
    match Browser::start(&options) {
        Ok(b) => Some(b),
        Err(e) if e.is_unavailable() && std::env::var_os("IRKIT_REQUIRE_BROWSER").is_none() => {
            eprintln!(
                "skipping the browser test: {e} (set IRKIT_REQUIRE_BROWSER=1 to fail instead)"
            );
            None
        }
        Err(e) => panic!("the browser cannot start: {e}"),
    }
}

/// Evaluates `script` (a function body) in the page until `ready` accepts
/// its value; returns that value.
fn until(b: &Browser, what: &str, script: &str, ready: impl Fn(&J) -> bool) -> J {
    let start = Instant::now();
    loop {
        let v = b.execute(script, vec![]).unwrap_or(J::Null);
        if ready(&v) {
            return v;
        }
        // A bound for a page or server that never gets there, not a speed
        // goal: on a loaded 2-core machine two PostgreSQL nodes can take tens
        // of seconds to drive the workflow to its next state.
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "timed out waiting for {what}; last value {v}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn text_of(b: &Browser, selector: &str) -> String {
    let v = b
        .execute(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;",
            vec![json!(selector)],
        )
        .unwrap();
    v.as_str().unwrap_or_default().to_string()
}

/// [`text_of`] without white space.
fn squeezed(b: &Browser, selector: &str) -> String {
    text_of(b, selector).split_whitespace().collect()
}

fn goto(b: &Browser, url: &str) {
    b.goto(url).unwrap();
}

/// Whether a screenshot shows a page: not one flat colour, and a fair
/// share of pixels unlike the most common one.
fn check_not_blank(png_bytes: &[u8]) -> (u32, u32) {
    let decoder = png::Decoder::new(png_bytes);
    let mut reader = decoder.read_info().expect("the screenshot is a PNG");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| &p[..3.min(channels)])
        .collect();
    let mut counts = std::collections::HashMap::new();
    for p in &pixels {
        *counts.entry(*p).or_insert(0usize) += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    assert!(
        counts.len() >= 16,
        "screenshot has only {} colours",
        counts.len()
    );
    assert!(
        (pixels.len() - most) * 20 > pixels.len(),
        "screenshot is almost one colour ({most} of {} pixels)",
        pixels.len()
    );
    (info.width, info.height)
}

/// `nodes`: one `irkit tcc serve` per node id on `database`; the browser
/// uses the first, any of them may drive the execution.
fn dashboard_round_trip(database: &str, dir: &Path, nodes: &[&str], bless: bool) {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    // The first effect holds the lease for a while, so the page can show
    // which node holds it; the payment service is down (nothing listens on
    // port 9), so a charge fails for good and the page offers Resume.
    let providers = dir.join("providers.toml");
    std::fs::write(
        &providers,
        "[[route]]\npattern = \"prepare\"\nprovider = \"echo\"\ndelay_ms = 2500\n\n[[route]]\npattern = \"payment.*\"\nprovider = \"webhook\"\nurl = \"http://127.0.0.1:9/charge\"\nretries = 0\n\n[[route]]\npattern = \"*\"\nprovider = \"echo\"\n",
    )
    .unwrap();
    let servers: Vec<tcc_serve::Server> = nodes
        .iter()
        .map(|node| {
            tcc_serve::serve(
                database,
                &providers,
                &["--token", TOKEN, "--node-id", node],
                &[],
                Some(&dir.join(format!("serve-{node}.log"))),
            )
        })
        .collect();
    let url = servers[0].url.clone();

    // The page is public, its data is not.
    let (code, body) = request(&url, "GET", "/ui", None, None).unwrap();
    assert_eq!(code, 200);
    assert!(String::from_utf8_lossy(&body).contains("/ui/assets/app.js"));
    let (code, _) = request(&url, "GET", "/ui/api/executions", None, None).unwrap();
    assert_eq!(code, 401);
    let (code, _) = request(&url, "GET", "/ui/api/executions", None, Some("wrong")).unwrap();
    assert_eq!(code, 401);
    let (code, _) = api(&url, "GET", "/ui/api/executions", None);
    assert_eq!(code, 200);

    let (code, j) = api(
        &url,
        "POST",
        "/v1/artifacts?name=flow",
        Some(&common::flow()),
    );
    assert_eq!(code, 201, "{j}");
    let hash = j["hash"].as_str().unwrap().to_string();
    let (code, j) = api(
        &url,
        "POST",
        "/v1/artifacts?name=worker",
        Some(&common::worker()),
    );
    assert_eq!(code, 201, "{j}");

    let Some(b) = start_browser(1400, 1400) else {
        return;
    };
    // Sign in once: the token stays in the tab.
    goto(&b, &format!("{url}/ui"));
    until(
        &b,
        "the sign-in form",
        "return !!document.querySelector('#token');",
        |v| v == &json!(true),
    );
    b.type_text("#token", TOKEN).unwrap();
    b.click("#login-button").unwrap();
    until(
        &b,
        "the executions table",
        "return !!document.querySelector('#executions thead');",
        |v| v == &json!(true),
    );

    let (code, j) = api(
        &url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "flow"}"#),
    );
    assert_eq!(code, 201, "{j}");
    let id = j["id"].as_str().unwrap().to_string();
    goto(&b, &format!("{url}/ui/executions/{id}"));
    // While the first effect runs, the node driving it holds the lease.
    until(
        &b,
        "the lease holder",
        "const e = document.querySelector('#lease'); return e ? e.textContent : null;",
        |v| {
            v.as_str()
                .is_some_and(|t| nodes.iter().any(|n| t.contains(&format!("held by {n}"))))
        },
    );
    until(
        &b,
        "the event wait",
        "const e = document.querySelector('#status'); return e ? e.dataset.status : null;",
        |v| v == &json!("suspended"),
    );
    assert!(text_of(&b, "#pending-text").contains("\"approved\""));
    // The node records the suspension, then releases its lease: the page may
    // show the first before the second.
    until(
        &b,
        "the lease released",
        "const e = document.querySelector('#lease'); return e ? e.textContent : null;",
        |v| v == &json!("free"),
    );
    // The pc of the suspended continuation, highlighted in the listing:
    // just after WaitForEvent (pc 7).
    let pc = until(
        &b,
        "the pc highlight",
        "const e = document.querySelector('li.pc-current'); return e ? [e.dataset.func, e.dataset.pc, e.textContent] : null;",
        |v| v.is_array(),
    );
    assert_eq!(
        (pc[0].as_str(), pc[1].as_str()),
        (Some("0"), Some("8")),
        "{pc}"
    );
    assert!(text_of(&b, "#listing").contains("WaitForEvent"));
    assert!(squeezed(&b, ".effect-input").contains("\"n\":7"));

    // Send the event from the page; the page follows without reloading.
    b.execute("window.__irkitMarker = 42; return null;", vec![])
        .unwrap();
    // The page fills an empty, unfocused event-name field from the pending
    // wait on each poll, and WebDriver's clear leaves the field unfocused: a
    // poll between the clear and the typing would double the name. Type
    // until the field holds exactly what was typed.
    for attempt in 0.. {
        b.clear("#event-name").unwrap();
        b.type_text("#event-name", "approved").unwrap();
        let typed = b
            .execute(
                "return document.querySelector('#event-name').value;",
                vec![],
            )
            .unwrap();
        if typed == json!("approved") {
            break;
        }
        assert!(attempt < 5, "the event name field keeps changing: {typed}");
    }
    b.type_text("#event-payload", r#"{"ok": true}"#).unwrap();
    b.click("#send-event").unwrap();
    until(
        &b,
        "completion",
        "const e = document.querySelector('#status'); return e ? e.dataset.status : null;",
        |v| v == &json!("completed"),
    );
    let marker = b
        .execute("return window.__irkitMarker || null;", vec![])
        .unwrap();
    assert_eq!(marker, json!(42), "the page was reloaded");
    assert_eq!(
        squeezed(&b, "#result"),
        r#"[{"n":7},{"ok":true},{"ok":true}]"#
    );
    let kinds = b
        .execute(
            "return [...document.querySelectorAll('#history li')].map(e => e.dataset.kind);",
            vec![],
        )
        .unwrap();
    for k in [
        "created",
        "effect",
        "checkpoint",
        "event_received",
        "event_delivered",
        "timer_delivered",
        "child_delivered",
    ] {
        assert!(
            kinds.as_array().unwrap().contains(&json!(k)),
            "{k} in {kinds}"
        );
    }
    assert!(text_of(&b, "#history").contains("checkpoint r"));
    assert!(text_of(&b, "#waits").contains("child:"));
    assert!(text_of(&b, "#action-status").contains("accepted"));
    let (code, j) = api(&url, "GET", &format!("/v1/executions/{id}"), None);
    assert_eq!(
        (code, j["status"].as_str()),
        (200, Some("completed")),
        "{j}"
    );

    let shot = b.screenshot_png().unwrap();
    let (w, h) = check_not_blank(&shot);
    assert!(w >= 800 && h >= 600, "{w}×{h}");
    if bless {
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tcc/dashboard.png");
        std::fs::write(&out, &shot).unwrap();
    }

    // The list: search by id prefix, filter by status and program.
    let prefix = &id[..id.len() - 4];
    goto(&b, &format!("{url}/ui?q={prefix}"));
    until(
        &b,
        "the id search",
        "return [...document.querySelectorAll('#executions tbody tr')].map(r => r.dataset.id);",
        |v| v == &json!([id]),
    );
    goto(&b, &format!("{url}/ui?status=completed&program=flow"));
    until(
        &b,
        "the filtered list",
        "return [...document.querySelectorAll('#executions tbody tr')].map(r => r.dataset.id);",
        |v| v == &json!([id]),
    );
    goto(&b, &format!("{url}/ui?status=suspended"));
    until(
        &b,
        "an empty list",
        "const c = document.querySelector('#executions caption'); return c ? c.textContent : null;",
        |v| v == &json!("No executions match."),
    );
    // The namespace picker (issue 35): the operator's token lists every
    // namespace holding data; choosing one filters the pages by it, and the
    // choice stays in the tab.
    let (code, j) = api(
        &url,
        "POST",
        "/v1/artifacts?name=acme-waiter&namespace=acme",
        Some(&common::waiter()),
    );
    assert_eq!(code, 201, "{j}");
    let (code, j) = api(
        &url,
        "POST",
        "/v1/executions?namespace=acme",
        Some(br#"{"program": "acme-waiter", "id": "acme-ui-1"}"#),
    );
    assert_eq!(code, 201, "{j}");
    goto(&b, &format!("{url}/ui"));
    until(
        &b,
        "the namespace picker",
        "const s = document.querySelector('#namespace'); return s && !s.hidden ? [...s.options].map(o => o.value) : null;",
        |v| v == &json!(["", "acme", "default"]),
    );
    let choose = |ns: &str| {
        b.execute(
            "const s = document.querySelector('#namespace'); s.value = arguments[0]; s.dispatchEvent(new Event('change')); return null;",
            vec![json!(ns)],
        )
        .unwrap();
    };
    let rows = "return document.querySelector('#namespace').value + ' ' + [...document.querySelectorAll('#executions tbody tr')].map(r => r.dataset.id + '@' + r.dataset.namespace).join(' ');";
    choose("acme");
    until(&b, "acme's executions only", rows, |v| {
        v == &json!("acme acme-ui-1@acme")
    });
    goto(&b, &format!("{url}/ui/programs"));
    until(
        &b,
        "acme's programs only",
        "return [...document.querySelectorAll('#programs tbody tr')].map(r => r.dataset.name);",
        |v| v == &json!(["acme-waiter"]),
    );
    goto(&b, &format!("{url}/ui/executions/acme-ui-1"));
    until(
        &b,
        "the execution's namespace",
        "const e = document.querySelector('#execution-namespace'); return e ? e.textContent : null;",
        |v| v == &json!("acme"),
    );
    goto(&b, &format!("{url}/ui"));
    until(
        &b,
        "the list in acme",
        "const s = document.querySelector('#namespace'); return s && !s.hidden ? s.value : null;",
        |v| v == &json!("acme"),
    );
    choose("default");
    until(&b, "default's executions", rows, |v| {
        v.as_str().is_some_and(|t| {
            t.starts_with("default ") && t.contains(&format!("{id}@default")) && !t.contains("acme")
        })
    });
    choose("");
    until(&b, "every namespace's executions", rows, |v| {
        v.as_str().is_some_and(|t| {
            t.starts_with(' ')
                && t.contains("acme-ui-1@acme")
                && t.contains(&format!("{id}@default"))
        })
    });

    // The programs page and the artifact's listing.
    goto(&b, &format!("{url}/ui/programs"));
    let row = until(
        &b,
        "the programs table",
        "const r = document.querySelector('#programs tr[data-name=flow]'); return r ? r.textContent : null;",
        |v| v.is_string(),
    );
    let row = row.as_str().unwrap();
    assert!(
        row.contains(&hash[..16])
            && row.contains("irkit-tests")
            && row.contains("durable.wait_for_event"),
        "{row}"
    );
    goto(&b, &format!("{url}/ui/programs/{hash}"));
    until(
        &b,
        "the artifact listing",
        "const e = document.querySelector('.program-listing'); return e ? e.textContent : null;",
        |v| {
            v.as_str()
                .is_some_and(|t| t.contains("WaitForEvent") && t.contains("Invoke"))
        },
    );
    // The schedules page (issue 35): a paused schedule is listed, and its
    // button resumes it through the API.
    let (c, j) = api(
        &url,
        "POST",
        "/v1/schedules",
        Some(br#"{"name": "hourly", "program": "flow", "every": "1h", "paused": true}"#),
    );
    assert_eq!(c, 201, "{j}");
    goto(&b, &format!("{url}/ui/schedules"));
    let row = until(
        &b,
        "the schedules table",
        "const r = document.querySelector('#schedules tr[data-name=hourly]'); return r ? r.textContent : null;",
        |v| v.is_string(),
    );
    assert!(
        row.as_str()
            .is_some_and(|r| r.contains("every 1h") && r.contains("paused")),
        "{row}"
    );
    b.execute(
        "document.querySelector('#schedules tr[data-name=hourly] button.toggle').click();",
        vec![],
    )
    .unwrap();
    until(
        &b,
        "the schedule resumed",
        "const r = document.querySelector('#schedules tr[data-name=hourly] .state'); return r ? r.textContent : null;",
        |v| v == &json!("active"),
    );
    let (_, j) = api(&url, "GET", "/v1/schedules/hourly", None);
    assert_eq!(j["paused"], false, "{j}");

    // Operator resume (issue 33): an execution failed by its charge shows
    // Resume; the button resumes it from the checkpoint before the charge
    // (the service is still down, so it fails again at the same effect).
    let source = dir.join("shop.py");
    std::fs::write(
        &source,
        "from tcc_engine.primitives import effect, program\n\n\n@program\nasync def run(order):\n    held = await effect(\"stock.hold\", input={\"qty\": order})\n    charge = await effect(\"payment.charge\", input={\"amount\": order})\n    return [held, charge]\n",
    )
    .unwrap();
    let artifact = dir.join("shop.json");
    let compiled = std::process::Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["tcc", "compile"])
        .arg(&source)
        .arg("-o")
        .arg(&artifact)
        .output()
        .unwrap();
    assert!(compiled.status.success(), "{compiled:?}");
    let (code, j) = api(
        &url,
        "POST",
        "/v1/artifacts?name=shop",
        Some(&std::fs::read(&artifact).unwrap()),
    );
    assert_eq!(code, 201, "{j}");
    let (code, j) = api(
        &url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "shop", "args": [3]}"#),
    );
    assert_eq!(code, 201, "{j}");
    let shop = j["id"].as_str().unwrap().to_string();
    goto(&b, &format!("{url}/ui/executions/{shop}"));
    until(
        &b,
        "the failed charge",
        "const e = document.querySelector('#status'); const r = document.querySelector('#resume'); return e && r ? [e.dataset.status, r.hidden] : null;",
        |v| v == &json!(["failed", false]),
    );
    b.click("#resume").unwrap();
    until(
        &b,
        "the resume accepted",
        "const e = document.querySelector('#action-status'); return e ? e.textContent : null;",
        |v| v.as_str().is_some_and(|t| t.contains("payment.charge")),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, history) = api(&url, "GET", &format!("/v1/executions/{shop}/history"), None);
        let resumed = history.to_string().contains("resumed_by_operator");
        let (_, status) = api(&url, "GET", &format!("/v1/executions/{shop}"), None);
        if resumed && status["status"] == "failed" {
            break;
        }
        assert!(Instant::now() < deadline, "{history} {status}");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Source lines (issue 35): a program registered from its Python source
    // by `irkit tcc register` keeps the text; suspended at its wait, the
    // page shows the wait's line (highlighted in the text), the line of
    // each history step, and the slots with their values.
    let greet = dir.join("greet.py");
    std::fs::write(
        &greet,
        "from tcc_engine.primitives import effect, program, wait_for_event\n\n\n@program\nasync def run(order):\n    held = await effect(\"stock.hold\", input={\"qty\": order})\n    ok = await wait_for_event(\"go\")\n    return [held, ok, order]\n",
    )
    .unwrap();
    let registered = std::process::Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(["tcc", "register", "--server", &url, "--token", TOKEN])
        .arg(&greet)
        .output()
        .unwrap();
    assert!(registered.status.success(), "{registered:?}");
    let greet_hash = String::from_utf8_lossy(&registered.stdout)
        .trim()
        .to_string();
    let (code, j) = api(
        &url,
        "GET",
        &format!("/v1/artifacts/{greet_hash}/source"),
        None,
    );
    assert_eq!((code, j["file"].as_str()), (200, Some("greet.py")), "{j}");
    let (code, j) = api(
        &url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "greet", "args": [3]}"#),
    );
    assert_eq!(code, 201, "{j}");
    let greeting = j["id"].as_str().unwrap().to_string();
    goto(&b, &format!("{url}/ui/executions/{greeting}"));
    let at = until(
        &b,
        "the source line at the pc",
        "const s = document.querySelector('#status'); const l = document.querySelector('#source-line'); const c = document.querySelector('#source-text li.src-current'); return s && l && c && s.dataset.status === 'suspended' ? [l.dataset.line, l.textContent, c.dataset.line, c.textContent] : null;",
        |v| v.is_array(),
    );
    assert_eq!(
        (at[0].as_str(), at[2].as_str()),
        (Some("7"), Some("7")),
        "{at}"
    );
    assert!(
        at[1].as_str().is_some_and(
            |t| t.contains("greet.py:7") && t.contains("ok = await wait_for_event(\"go\")")
        ),
        "{at}"
    );
    assert!(
        at[3].as_str().is_some_and(|t| t.contains("wait_for_event")),
        "{at}"
    );
    assert!(text_of(&b, "#source-text").contains("async def run(order):"));
    // The effect's step stands at its line.
    let steps = b
        .execute(
            "return [...document.querySelectorAll('#history li')].map(e => [e.dataset.kind, e.dataset.line || null]);",
            vec![],
        )
        .unwrap();
    assert!(
        steps.as_array().unwrap().contains(&json!(["effect", "6"])),
        "{steps}"
    );
    assert!(text_of(&b, "#history").contains("greet.py:6"));
    // The slots: `order` (the parameter) and `held` with their values.
    let slots = until(
        &b,
        "the slots",
        "return [...document.querySelectorAll('#slots tr[data-slot]')].map(r => [r.dataset.slot, r.children[1].textContent, r.querySelector('.slot-value').textContent]);",
        |v| v.as_array().is_some_and(|a| a.len() >= 2),
    );
    assert_eq!(slots[0], json!(["0", "param", "3"]), "{slots}");
    assert_eq!(slots[1], json!(["1", "local", "{\"qty\":3}"]), "{slots}");
    if bless {
        let shot = b.screenshot_png().unwrap();
        check_not_blank(&shot);
        let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tcc/dashboard-source.png");
        std::fs::write(&out, &shot).unwrap();
    }
    let (code, j) = api(
        &url,
        "POST",
        &format!("/v1/executions/{greeting}/events"),
        Some(br#"{"name": "go", "payload": true}"#),
    );
    assert_eq!(code, 202, "{j}");
    until(
        &b,
        "the greeting completed",
        "const e = document.querySelector('#status'); return e ? e.dataset.status : null;",
        |v| v == &json!("completed"),
    );
    assert_eq!(squeezed(&b, "#result"), r#"[{"qty":3},true,3]"#);

    // Pause and resume (issue 35): Pause holds an execution waiting for an
    // event (the event sent meanwhile is kept), Resume lets it take it.
    let (code, j) = api(
        &url,
        "POST",
        "/v1/artifacts?name=waiter",
        Some(&common::waiter()),
    );
    assert_eq!(code, 201, "{j}");
    let (code, j) = api(
        &url,
        "POST",
        "/v1/executions",
        Some(br#"{"program": "waiter"}"#),
    );
    assert_eq!(code, 201, "{j}");
    let held = j["id"].as_str().unwrap().to_string();
    goto(&b, &format!("{url}/ui/executions/{held}"));
    until(
        &b,
        "the waiting execution with Pause",
        "const e = document.querySelector('#status'); const p = document.querySelector('#pause'); const r = document.querySelector('#resume'); return e && p && r ? [e.dataset.status, p.hidden, r.hidden] : null;",
        |v| v == &json!(["suspended", false, true]),
    );
    b.click("#pause").unwrap();
    until(
        &b,
        "the paused execution with Resume",
        "const e = document.querySelector('#status'); const p = document.querySelector('#pause'); const r = document.querySelector('#resume'); const by = document.querySelector('#paused-by'); return e && p && r && by ? [e.dataset.status, p.hidden, r.hidden, by.textContent] : null;",
        |v| v == &json!(["paused", true, false, "execution"]),
    );
    let (code, j) = api(
        &url,
        "POST",
        &format!("/v1/executions/{held}/events"),
        Some(br#"{"name": "never", "payload": 1}"#),
    );
    assert_eq!(code, 202, "{j}");
    let (_, status) = api(&url, "GET", &format!("/v1/executions/{held}"), None);
    assert_eq!(status["status"], "paused", "{status}");
    b.click("#resume").unwrap();
    until(
        &b,
        "the resumed execution completed",
        "const e = document.querySelector('#status'); return e ? e.dataset.status : null;",
        |v| v == &json!("completed"),
    );
    b.quit().unwrap();
    drop(servers);
}

#[test]
fn the_dashboard_follows_and_completes_a_workflow_on_sqlite() {
    let d = Dir::new("irkit-tcc-ui-");
    let db = d.0.join("host.db");
    let bless = golden::blessing();
    dashboard_round_trip(&db.to_string_lossy(), &d.0, &["node-sqlite"], bless);
}

#[test]
fn the_dashboard_follows_and_completes_a_workflow_on_postgres() {
    let Some(schema) = tcc_host::test_support::ScratchSchema::create("t_ui_browser").unwrap()
    else {
        return;
    };
    let d = Dir::new("irkit-tcc-ui-pg-");
    // Two nodes share the database: the page served by one shows the
    // lease of whichever drives the execution.
    dashboard_round_trip(&schema.url(), &d.0, &["node-a", "node-b"], false);
}
