//! Namespaces (issue 35): executions, registered program names and
//! schedules belong to one namespace each, and a bearer token is scoped to
//! one or more namespaces ([`tokens`]). A token never sees or touches the
//! data of a namespace it is not scoped to.
//!
//! - Each request acts in one [`Scope`], resolved by the service's guard
//!   from the token's [`Grant`] and the namespace the request names
//!   (header [`HEADER`] or query parameter [`QUERY`]; see [`resolve`]).
//! - Every route has a rule ([`routes::RULES`]): the guard refuses a
//!   matched route without one, so a new route cannot be served unscoped.
//!   Routes naming an execution, task or schedule answer for another
//!   namespace's row exactly as for an unknown one (404, the same
//!   message), so existence does not leak.
//! - Execution ids, program names and schedule names stay global keys
//!   (one row each, owned by a namespace); artifacts are content-addressed
//!   and shared (knowing a hash means holding the content).
//!
//! [`NamespaceStore`] is what the stores add for it
//! (`store::sqlite::namespace`, `store::pg::namespace`).

use crate::store::{Store, StoreError};

mod name;
pub mod routes;
pub mod tokens;

pub use name::check_name;

pub use tokens::{Grant, TokenFileError, TokenSet};

/// The namespace of rows from before namespaces, and of requests that name
/// none.
pub const DEFAULT: &str = "default";
/// The request header naming the namespace.
pub const HEADER: &str = "tcc-namespace";
/// The query parameter naming the namespace.
pub const QUERY: &str = "namespace";

/// The namespace a request acts in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The namespace; `None` for a token granting every namespace that
    /// named none: it reads across namespaces and creates in [`DEFAULT`].
    pub namespace: Option<String>,
    /// Whether the token grants every namespace (an operator's token, or
    /// no token on loopback): needed for metrics and flow limits.
    pub every: bool,
}

impl Scope {
    /// The scope of code that is not behind the guard: every namespace.
    pub fn operator() -> Scope {
        Scope {
            namespace: None,
            every: true,
        }
    }

    /// The namespace new rows go to.
    pub fn creates_in(&self) -> &str {
        self.namespace.as_deref().unwrap_or(DEFAULT)
    }

    /// Whether a row of `namespace` is visible.
    pub fn sees(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|n| n == namespace)
    }

    /// The filter of listings (`None`: every namespace).
    pub fn filter(&self) -> Option<String> {
        self.namespace.clone()
    }
}

/// Why a request's namespace was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// The named namespace is not a valid name, or the header and the
    /// query name different ones.
    #[error("{0}")]
    Bad(String),
    /// The token is not scoped to the named namespace.
    #[error("the token is not scoped to namespace {0:?}")]
    Forbidden(String),
    /// The token has several namespaces and the request named none.
    #[error(
        "the token is scoped to several namespaces ({0}): name one with the TCC-Namespace header or ?namespace="
    )]
    Required(String),
}

/// Resolves a request's scope: `grant` is the token's (`Every` without a
/// token), `header` and `query` what the request names.
///
/// - A named namespace must be granted (else [`ScopeError::Forbidden`]).
/// - Naming none: a token of one namespace acts in it; a token of several
///   acts in [`DEFAULT`] when it has it, else [`ScopeError::Required`]; a
///   token of every namespace acts across them ([`Scope::namespace`]
///   `None`).
pub fn resolve(
    grant: &Grant,
    header: Option<&str>,
    query: Option<&str>,
) -> Result<Scope, ScopeError> {
    let named = match (header, query) {
        (Some(h), Some(q)) if h != q => {
            return Err(ScopeError::Bad(format!(
                "the TCC-Namespace header ({h:?}) and ?namespace= ({q:?}) differ"
            )));
        }
        (Some(n), _) | (None, Some(n)) => Some(n),
        (None, None) => None,
    };
    let every = matches!(grant, Grant::Every);
    if let Some(n) = named {
        check_name(n).map_err(ScopeError::Bad)?;
        if !grant.covers(n) {
            return Err(ScopeError::Forbidden(n.to_string()));
        }
        return Ok(Scope {
            namespace: Some(n.to_string()),
            every,
        });
    }
    match grant {
        Grant::Every => Ok(Scope {
            namespace: None,
            every,
        }),
        Grant::Only(list) if list.len() == 1 => Ok(Scope {
            namespace: Some(list[0].clone()),
            every,
        }),
        Grant::Only(list) if list.iter().any(|n| n == DEFAULT) => Ok(Scope {
            namespace: Some(DEFAULT.to_string()),
            every,
        }),
        Grant::Only(list) => Err(ScopeError::Required(list.join(", "))),
    }
}

/// What the stores keep for namespaces (both backends implement it).
pub trait NamespaceStore: Send + Sync {
    /// The namespace of execution `id` (`None`: no such execution).
    fn execution_namespace(&self, id: &str) -> Result<Option<String>, StoreError>;
    /// The namespace owning program name `name` (`None`: not registered).
    fn program_namespace(&self, name: &str) -> Result<Option<String>, StoreError>;
    /// The hash program name `name` stands for and the namespace owning
    /// it, in one read (`None`: not registered).
    fn program_with_namespace(&self, name: &str) -> Result<Option<(String, String)>, StoreError>;
    /// The namespace of schedule `name` (`None`: no such schedule).
    fn schedule_namespace(&self, name: &str) -> Result<Option<String>, StoreError>;
    /// Registers `name` → `hash` in `namespace`; `false` (nothing written)
    /// when another namespace owns the name.
    fn set_program_in(
        &self,
        namespace: &str,
        name: &str,
        hash: &str,
        now: i64,
    ) -> Result<bool, StoreError>;
    /// The program names of `namespace` with their hashes, by name.
    fn programs_in(&self, namespace: &str) -> Result<Vec<(String, String)>, StoreError>;
    /// Every namespace holding an execution, a program name or a schedule,
    /// by name (the executions' read as a skip scan of their
    /// `(namespace, seq)` index: one probe per namespace, not per row).
    fn namespaces(&self) -> Result<Vec<String>, StoreError>;
}

/// The store's [`NamespaceStore`], when it has one.
pub fn store_of(store: &dyn Store) -> Option<&dyn NamespaceStore> {
    use crate::store::backend::{Backend, backend};
    Some(match backend(store)? {
        Backend::Sqlite(s) => s,
        Backend::Pg(s) => s,
    })
}

fn unsupported() -> StoreError {
    StoreError::Unsupported("namespaces".into())
}

/// Whether execution `id` exists and `scope` sees it (a store without
/// namespaces keeps everything in [`DEFAULT`]).
pub fn sees_execution(store: &dyn Store, scope: &Scope, id: &str) -> Result<bool, StoreError> {
    match store_of(store) {
        Some(ns) => Ok(ns.execution_namespace(id)?.is_some_and(|n| scope.sees(&n))),
        None => Ok(scope.sees(DEFAULT) && store.get_execution(id)?.is_some()),
    }
}

/// Whether `scope` may act on program name `name`: registered in a
/// namespace it sees, or (for a token of every namespace) not registered
/// at all.
pub fn sees_program(store: &dyn Store, scope: &Scope, name: &str) -> Result<bool, StoreError> {
    let owner = match store_of(store) {
        Some(ns) => ns.program_namespace(name)?,
        None => store.resolve_program(name)?.map(|_| DEFAULT.to_string()),
    };
    Ok(match owner {
        Some(n) => scope.sees(&n),
        None => scope.every,
    })
}

/// Whether schedule `name` exists and `scope` sees it.
pub fn sees_schedule(store: &dyn Store, scope: &Scope, name: &str) -> Result<bool, StoreError> {
    Ok(store_of(store)
        .ok_or_else(unsupported)?
        .schedule_namespace(name)?
        .is_some_and(|n| scope.sees(&n)))
}

/// A program name or artifact hash to (hash, name) for a start or a
/// schedule in `namespace`: names registered in another namespace are
/// unknown there; hashes are shared.
pub fn resolve_program(
    store: &dyn Store,
    namespace: &str,
    program: &str,
) -> Result<Option<(String, Option<String>)>, StoreError> {
    // The hash and its owner in one read (a start reads nothing else
    // before it creates).
    let named = match store_of(store) {
        Some(ns) => ns.program_with_namespace(program)?,
        None => store
            .resolve_program(program)?
            .map(|h| (h, DEFAULT.to_string())),
    };
    if let Some((h, owner)) = named
        && owner == namespace
    {
        return Ok(Some((h, Some(program.to_string()))));
    }
    if store.get_artifact(program)?.is_some() {
        return Ok(Some((program.to_string(), None)));
    }
    Ok(None)
}

/// Registers program name `name` → `hash` in `namespace`: a conflict when
/// another namespace owns the name (the answer says only that the name is
/// taken).
pub fn set_program(
    store: &dyn Store,
    namespace: &str,
    name: &str,
    hash: &str,
) -> Result<(), StoreError> {
    match store_of(store) {
        Some(ns) => {
            if ns.set_program_in(namespace, name, hash, crate::ids::now_ms())? {
                Ok(())
            } else {
                Err(StoreError::Conflict(format!(
                    "program name {name:?} is taken: program names are unique across namespaces"
                )))
            }
        }
        None if namespace == DEFAULT => store.set_program(name, hash),
        None => Err(unsupported()),
    }
}

/// The namespaces a token of `grant` may name, by name: its own, or (a
/// token of every namespace) [`DEFAULT`] and every namespace holding
/// data.
pub fn visible(store: &dyn Store, grant: &Grant) -> Result<Vec<String>, StoreError> {
    match grant {
        Grant::Only(list) => Ok(list.clone()),
        Grant::Every => {
            let mut all = match store_of(store) {
                Some(ns) => ns.namespaces()?,
                None => Vec::new(),
            };
            all.push(DEFAULT.to_string());
            all.sort();
            all.dedup();
            Ok(all)
        }
    }
}

/// The program names `scope` sees, with their hashes.
pub fn programs(store: &dyn Store, scope: &Scope) -> Result<Vec<(String, String)>, StoreError> {
    match (&scope.namespace, store_of(store)) {
        (None, _) => store.programs(),
        (Some(n), Some(ns)) => ns.programs_in(n),
        (Some(n), None) if n == DEFAULT => store.programs(),
        (Some(_), None) => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only(names: &[&str]) -> Grant {
        Grant::Only(names.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn names_are_checked() {
        for good in ["default", "a", "acme-1", "x.y_z", "0a"] {
            check_name(good).unwrap();
        }
        for bad in ["", "A", "-a", ".a", "a/b", "a b", "é", &"a".repeat(64)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn scopes_follow_the_grant_and_the_named_namespace() {
        let one = |n: &str| Scope {
            namespace: Some(n.into()),
            every: false,
        };
        assert_eq!(resolve(&only(&["acme"]), None, None), Ok(one("acme")));
        assert_eq!(
            resolve(&only(&["acme", "globex"]), Some("globex"), None),
            Ok(one("globex"))
        );
        assert_eq!(
            resolve(&only(&["acme", "globex"]), None, Some("acme")),
            Ok(one("acme"))
        );
        assert_eq!(
            resolve(&only(&["acme", "default"]), None, None),
            Ok(one("default"))
        );
        assert!(matches!(
            resolve(&only(&["acme", "globex"]), None, None),
            Err(ScopeError::Required(_))
        ));
        assert_eq!(
            resolve(&only(&["acme"]), Some("globex"), None),
            Err(ScopeError::Forbidden("globex".into()))
        );
        assert!(matches!(
            resolve(&only(&["acme"]), Some("acme"), Some("globex")),
            Err(ScopeError::Bad(_))
        ));
        assert!(matches!(
            resolve(&Grant::Every, Some("Bad Name"), None),
            Err(ScopeError::Bad(_))
        ));
        assert_eq!(resolve(&Grant::Every, None, None), Ok(Scope::operator()));
        let s = resolve(&Grant::Every, Some("acme"), Some("acme")).unwrap();
        assert_eq!(
            s,
            Scope {
                namespace: Some("acme".into()),
                every: true
            }
        );
        assert!(s.sees("acme") && !s.sees("default"));
        assert!(Scope::operator().sees("anything"));
        assert_eq!(Scope::operator().creates_in(), DEFAULT);
    }
}
