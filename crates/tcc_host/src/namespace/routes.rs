//! The namespace rule of every route ([`RULES`]), and the check the
//! service's guard makes before a route runs ([`check`]).

use super::Scope;
use crate::api_error::ApiError;
use crate::store::{Store, StoreError};

/// How a route is scoped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// No namespaced data (health, the OpenAPI description, the
    /// dashboard's page and assets).
    Public,
    /// The handler filters what it lists, or creates in the scope's
    /// namespace (starts, registrations, listings, polls).
    Scoped,
    /// Content-addressed and shared across namespaces (by hash).
    Artifact,
    /// The `{id}` is an execution: another namespace's answers as an
    /// unknown one.
    Execution,
    /// The `{id}` is a worker task: its execution decides.
    Task,
    /// The `{name}` is a schedule.
    Schedule,
    /// The `{name}` is a program name: registered in the scope's
    /// namespace, or (tokens of every namespace only) not registered.
    Program,
    /// Needs a token of every namespace (metrics, setting and deleting
    /// flow limits): they are the operator's. A flow limit route acts on
    /// the namespace the request names (none: the global limits).
    Operator,
    /// About the token itself (the namespaces it may name): any valid
    /// token, whether or not the request names a namespace.
    Token,
}

/// Every route: method, path template (as the router has it), rule. The
/// guard refuses a matched route missing here (500), and the namespace
/// sweep test drives every entry.
pub const RULES: &[(&str, &str, Rule)] = &[
    ("GET", "/v1/health", Rule::Public),
    ("GET", "/v1/openapi.json", Rule::Public),
    ("GET", "/metrics", Rule::Operator),
    ("GET", "/v1/namespaces", Rule::Token),
    ("POST", "/v1/artifacts", Rule::Scoped),
    ("GET", "/v1/artifacts/{hash}", Rule::Artifact),
    ("GET", "/v1/artifacts/{hash}/source", Rule::Artifact),
    ("GET", "/v1/programs", Rule::Scoped),
    ("POST", "/v1/programs/{name}/pause", Rule::Program),
    ("POST", "/v1/programs/{name}/resume", Rule::Program),
    ("POST", "/v1/executions", Rule::Scoped),
    ("GET", "/v1/executions", Rule::Scoped),
    ("GET", "/v1/executions/{id}", Rule::Execution),
    ("DELETE", "/v1/executions/{id}", Rule::Execution),
    ("GET", "/v1/executions/{id}/history", Rule::Execution),
    ("GET", "/v1/executions/{id}/effects", Rule::Execution),
    ("GET", "/v1/executions/{id}/result", Rule::Execution),
    ("POST", "/v1/executions/{id}/events", Rule::Execution),
    ("POST", "/v1/executions/{id}/cancel", Rule::Execution),
    ("POST", "/v1/executions/{id}/terminate", Rule::Execution),
    ("POST", "/v1/executions/{id}/resume", Rule::Execution),
    ("POST", "/v1/executions/{id}/pause", Rule::Execution),
    ("POST", "/v1/schedules", Rule::Scoped),
    ("GET", "/v1/schedules", Rule::Scoped),
    ("GET", "/v1/schedules/{name}", Rule::Schedule),
    ("DELETE", "/v1/schedules/{name}", Rule::Schedule),
    ("POST", "/v1/schedules/{name}/pause", Rule::Schedule),
    ("POST", "/v1/schedules/{name}/resume", Rule::Schedule),
    ("GET", "/v1/limits", Rule::Scoped),
    ("GET", "/v1/limits/{scope}", Rule::Scoped),
    ("PUT", "/v1/limits/{scope}", Rule::Operator),
    ("DELETE", "/v1/limits/{scope}", Rule::Operator),
    ("POST", "/v1/tasks/poll", Rule::Scoped),
    ("POST", "/v1/tasks/answers", Rule::Scoped),
    ("GET", "/v1/tasks/{id}", Rule::Task),
    ("POST", "/v1/tasks/{id}/heartbeat", Rule::Task),
    ("POST", "/v1/tasks/{id}/complete", Rule::Task),
    ("POST", "/v1/tasks/{id}/fail", Rule::Task),
    ("GET", "/ui", Rule::Public),
    ("GET", "/ui/", Rule::Public),
    ("GET", "/ui/executions/{id}", Rule::Public),
    ("GET", "/ui/programs", Rule::Public),
    ("GET", "/ui/programs/{hash}", Rule::Public),
    ("GET", "/ui/schedules", Rule::Public),
    ("GET", "/ui/assets/app.js", Rule::Public),
    ("GET", "/ui/assets/app.css", Rule::Public),
    ("GET", "/ui/api/executions", Rule::Scoped),
    ("GET", "/ui/api/executions/{id}", Rule::Execution),
    ("GET", "/ui/api/programs", Rule::Scoped),
    ("GET", "/ui/api/artifacts/{hash}", Rule::Artifact),
];

/// The rule of a matched route (`HEAD` is answered by the `GET` route).
pub fn rule_for(method: &str, template: &str) -> Option<Rule> {
    let method = if method == "HEAD" { "GET" } else { method };
    RULES
        .iter()
        .find(|(m, t, _)| *m == method && *t == template)
        .map(|(_, _, r)| *r)
}

/// `%XX` escapes decoded, anything else (a `%` not followed by two hex
/// digits, `+`) kept as it is: what the router's `Path` extractor gives.
fn decode_lenient(raw: &str) -> Option<String> {
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = raw
            .get(i + 1..i + 3)
            .filter(|_| b[i] == b'%')
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) => {
                out.push(v);
                i += 3;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The path parameter of `template` (its one `{…}` segment) in `path`,
/// decoded every way a route decodes one: the service's own routes
/// (`+` read as a space, malformed escapes refused), and the router's
/// `Path` (`+` kept, malformed escapes kept literally). Decodings that
/// hold a NUL are left out: no stored row has one, and the route refuses
/// it itself.
fn param_candidates(template: &str, path: &str) -> Vec<String> {
    let Some(at) = template.split('/').position(|s| s.starts_with('{')) else {
        return Vec::new();
    };
    let Some(raw) = path.split('/').nth(at) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Ok(spaced) = crate::percent::percent_decode(raw) {
        out.push(spaced);
    }
    if let Ok(kept) = crate::percent::percent_decode(&raw.replace('+', "%2B")) {
        out.push(kept);
    }
    if let Some(lenient) = decode_lenient(raw) {
        out.push(lenient);
    }
    out.retain(|p| !p.contains('\0'));
    out.sort();
    out.dedup();
    out
}

/// The execution id of a task id (the journal key
/// `{escaped execution id}:{effect key}`, `crate::store::journal_key`).
pub fn task_execution(task_id: &str) -> Option<String> {
    let escaped = task_id.split_once(':')?.0;
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let esc = rest.get(at..at + 3)?;
        match esc {
            "%25" => out.push('%'),
            "%3A" => out.push(':'),
            _ => return None,
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Some(out)
}

/// Whether worker task `id` belongs to an execution that exists and
/// `scope` sees.
pub fn task_visible(store: &dyn Store, scope: &Scope, id: &str) -> Result<bool, StoreError> {
    match task_execution(id) {
        Some(execution) => super::sees_execution(store, scope, &execution),
        None => Ok(false),
    }
}

/// The answer of a task route (heartbeat, complete, fail) whose lease
/// token did not match: `404` when the task's execution is not visible
/// (the check [`check`] leaves to the route under a token of every
/// namespace), else `lost` (the lease's `409`).
pub fn task_refusal(store: &dyn Store, scope: &Scope, id: &str, lost: ApiError) -> ApiError {
    match task_visible(store, scope, id) {
        Ok(true) => lost,
        Ok(false) => ApiError::NotFound(format!("no worker task {id:?}")),
        Err(e) => ApiError::from(e),
    }
}

/// The `GET` routes whose handler shows the execution's status: the guard
/// reads it (`crate::status_read`: the row with its retry, pause marks and
/// flow-control queues, one statement) in place of the namespace alone and
/// hands it on ([`Checked::status`]), so a status poll costs one read. Every other
/// execution route gets the id the guard found ([`Checked::execution`]):
/// the history and effects routes, which need only to know the execution
/// exists, then read no row at all. `GET /v1/executions/{id}/result`
/// answers an ended execution, or one asked without a wait, from that
/// read too (`crate::await_result`).
pub const ROW_ROUTES: &[&str] = &[
    "/v1/executions/{id}",
    "/ui/api/executions/{id}",
    "/v1/executions/{id}/result",
];

/// What [`check`] found while checking a request.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    /// The status read of a [`ROW_ROUTES`] request's execution, made by
    /// the check (when its parameter decodes one way only).
    pub status: Option<std::sync::Arc<crate::status_read::StatusRead>>,
    /// The execution id of an execution route the check found existing and
    /// visible (when its parameter decodes one way only): a handler that
    /// needs no more of the row than that (history, effects) does not
    /// read it again.
    pub execution: Option<String>,
}

/// Checks a request of `rule` on `path` (matched by `template`) against
/// `scope`: `Ok` to run the route, else its answer. A row the scope does
/// not see answers as an unknown one.
pub fn check(
    store: &dyn Store,
    scope: &Scope,
    rule: Rule,
    method: &str,
    template: &str,
    path: &str,
) -> Result<Checked, ApiError> {
    // No decoding at all: the route refuses the parameter itself.
    let params = || Ok::<_, ApiError>(param_candidates(template, path));
    match rule {
        Rule::Public | Rule::Scoped | Rule::Artifact | Rule::Token => Ok(Checked::default()),
        Rule::Operator if scope.every => Ok(Checked::default()),
        Rule::Operator => Err(ApiError::NamespaceForbidden(
            "this route is the operator's: it needs a token of every namespace (`*`)".into(),
        )),
        Rule::Execution => {
            let ids = params()?;
            let unknown = |id: &str| ApiError::NotFound(format!("no execution {id:?}"));
            if let [id] = &ids[..]
                && (method == "GET" || method == "HEAD")
                && ROW_ROUTES.contains(&template)
            {
                let read = crate::status_read::read(store, id, crate::ids::now_ms())?
                    .filter(|r| scope.sees(&r.row.namespace))
                    .ok_or_else(|| unknown(id))?;
                return Ok(Checked {
                    status: Some(std::sync::Arc::new(read)),
                    execution: Some(id.clone()),
                });
            }
            for id in &ids {
                if !super::sees_execution(store, scope, id)? {
                    return Err(unknown(id));
                }
            }
            Ok(Checked {
                status: None,
                execution: match &ids[..] {
                    [id] => Some(id.clone()),
                    _ => None,
                },
            })
        }
        // A worker's heartbeat or answer under a token of every namespace
        // that names none: nothing to hide, and the statement that takes
        // it matches the lease token of the task itself. The route runs
        // unchecked (one store read fewer per task answer) and checks
        // only when it refuses ([`task_refusal`]), so that an unknown
        // task still answers 404.
        Rule::Task if method == "POST" && scope.namespace.is_none() => Ok(Checked::default()),
        Rule::Task => {
            for id in params()? {
                if !task_visible(store, scope, &id)? {
                    return Err(ApiError::NotFound(format!("no worker task {id:?}")));
                }
            }
            Ok(Checked::default())
        }
        Rule::Schedule => {
            for name in params()? {
                if !super::sees_schedule(store, scope, &name)? {
                    return Err(ApiError::Store(StoreError::NotFound(format!(
                        "schedule {name:?}"
                    ))));
                }
            }
            Ok(Checked::default())
        }
        Rule::Program => {
            for name in params()? {
                if !super::sees_program(store, scope, &name)? {
                    return Err(ApiError::NotFound(format!("no program {name:?}")));
                }
            }
            Ok(Checked::default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_lead_to_their_execution() {
        assert_eq!(task_execution("e1:pay").as_deref(), Some("e1"));
        assert_eq!(task_execution("a%3Ab%25c:k:x").as_deref(), Some("a:b%c"));
        assert_eq!(task_execution("a%253A:k").as_deref(), Some("a%3A"));
        assert_eq!(task_execution("nokey"), None);
        assert_eq!(task_execution("bad%zz:k"), None);
        assert_eq!(task_execution("bad%2:k"), None);
    }

    #[test]
    fn parameters_are_read_both_ways() {
        assert_eq!(
            param_candidates("/v1/executions/{id}", "/v1/executions/a%2Fb"),
            vec!["a/b".to_string()]
        );
        assert_eq!(
            param_candidates("/v1/executions/{id}/cancel", "/v1/executions/a+b/cancel"),
            vec!["a b".to_string(), "a+b".to_string()]
        );
        assert_eq!(
            param_candidates("/v1/executions/{id}/pause", "/v1/executions/a%zz/pause"),
            vec!["a%zz".to_string()]
        );
        assert!(param_candidates("/v1/executions/{id}", "/v1/executions/a%00").is_empty());
        assert!(param_candidates("/v1/health", "/v1/health").is_empty());
    }

    #[test]
    fn the_check_hands_on_the_execution_it_found() {
        use crate::store::{NewExecution, Store};
        let dir = std::env::temp_dir().join(crate::ids::random_id("routes-checked-"));
        std::fs::create_dir_all(&dir).unwrap();
        let store = crate::store::sqlite::SqliteStore::open(&dir.join("t.db")).unwrap();
        store
            .create_execution(&NewExecution {
                id: "e1".into(),
                artifact_hash: "h".into(),
                program_name: None,
                args: crate::values::TaggedList::from_values(&[]),
                parent: None,
                namespace: "acme".into(),
            })
            .unwrap();
        let acme = Scope {
            namespace: Some("acme".into()),
            every: false,
        };
        let globex = Scope {
            namespace: Some("globex".into()),
            every: false,
        };
        let run = |scope: &Scope, template: &str, path: &str| {
            check(&store, scope, Rule::Execution, "GET", template, path)
        };
        // History and effects: the id found, no row read for them.
        for route in ["history", "effects"] {
            let template = format!("/v1/executions/{{id}}/{route}");
            let c = run(&acme, &template, &format!("/v1/executions/e1/{route}")).unwrap();
            assert_eq!(
                (c.execution.as_deref(), c.status.is_none()),
                (Some("e1"), true)
            );
            assert!(run(&globex, &template, &format!("/v1/executions/e1/{route}")).is_err());
            assert!(run(&acme, &template, &format!("/v1/executions/e2/{route}")).is_err());
        }
        // The status route: the whole row.
        let c = run(&acme, "/v1/executions/{id}", "/v1/executions/e1").unwrap();
        assert_eq!(c.execution.as_deref(), Some("e1"));
        assert_eq!(
            c.status.map(|r| r.row.namespace.clone()).as_deref(),
            Some("acme")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_rule_is_for_one_route() {
        let mut seen = std::collections::BTreeSet::new();
        for (m, t, _) in RULES {
            assert!(seen.insert((m, t)), "{m} {t} twice");
        }
        assert_eq!(rule_for("HEAD", "/v1/health"), Some(Rule::Public));
        assert_eq!(rule_for("GET", "/nope"), None);
    }
}
