//! Errors of the HTTP API (the service's routes and the dashboard's data
//! routes), typed, and the one place where each kind gets its stable code
//! (`TCC-H2xx`, docs/diagnostics.md), its HTTP status and its JSON body:
//!
//! ```json
//! {"code": "TCC-H202", "error": {"code": "not_found", "message": "no execution \"x\""}}
//! ```
//!
//! `error.code` is the API's own name for the kind (the OpenAPI
//! description's enum); the top-level `code` is its diagnostic code.

use crate::host::HostError;
use crate::store::StoreError;
use serde_json::{Value as J, json};

/// What went wrong, as the API reports it: one stable code, one HTTP
/// status and one API name per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request is malformed (JSON, fields, escapes, values).
    BadRequest,
    /// The bearer token is missing or wrong.
    Unauthorized,
    /// No such route, execution or artifact.
    NotFound,
    /// No program of that name or hash is registered.
    UnknownProgram,
    /// The request conflicts with the stored state (an id already in use,
    /// a terminal execution).
    Conflict,
    /// The body is larger than the configured limit.
    PayloadTooLarge,
    /// The artifact does not decode, its hash does not match, or it does
    /// not validate against this engine and host.
    InvalidArtifact,
    /// The host or its store failed.
    Internal,
    /// The store does not provide the operation.
    Unsupported,
    /// The request took longer than the request timeout.
    Timeout,
    /// The request's `Host` or `Origin` is not this service
    /// ([`crate::admission`]).
    Forbidden,
    /// A `POST` whose body is not declared `application/json`.
    UnsupportedMediaType,
    /// An operator's resume of an execution that is not `failed`, or that
    /// failed for another reason than an effect it can be resumed from.
    NotResumable,
    /// The token is not scoped to the namespace the request names, or the
    /// route needs a token of every namespace (`crate::namespace`).
    NamespaceForbidden,
    /// The token is scoped to several namespaces and the request named
    /// none of them.
    NamespaceRequired,
}

impl ErrorKind {
    /// Every kind, in code order.
    pub const ALL: [ErrorKind; 15] = [
        ErrorKind::BadRequest,
        ErrorKind::Unauthorized,
        ErrorKind::NotFound,
        ErrorKind::UnknownProgram,
        ErrorKind::Conflict,
        ErrorKind::PayloadTooLarge,
        ErrorKind::InvalidArtifact,
        ErrorKind::Internal,
        ErrorKind::Unsupported,
        ErrorKind::Timeout,
        ErrorKind::Forbidden,
        ErrorKind::UnsupportedMediaType,
        ErrorKind::NotResumable,
        ErrorKind::NamespaceForbidden,
        ErrorKind::NamespaceRequired,
    ];

    /// The stable diagnostic code, the HTTP status and the API's name.
    fn facts(self) -> (&'static str, u16, &'static str) {
        match self {
            ErrorKind::BadRequest => ("TCC-H200", 400, "bad_request"),
            ErrorKind::Unauthorized => ("TCC-H201", 401, "unauthorized"),
            ErrorKind::NotFound => ("TCC-H202", 404, "not_found"),
            ErrorKind::UnknownProgram => ("TCC-H203", 404, "unknown_program"),
            ErrorKind::Conflict => ("TCC-H204", 409, "conflict"),
            ErrorKind::PayloadTooLarge => ("TCC-H205", 413, "payload_too_large"),
            ErrorKind::InvalidArtifact => ("TCC-H206", 422, "invalid_artifact"),
            ErrorKind::Internal => ("TCC-H207", 500, "internal"),
            ErrorKind::Unsupported => ("TCC-H208", 501, "unsupported"),
            ErrorKind::Timeout => ("TCC-H209", 503, "timeout"),
            ErrorKind::Forbidden => ("TCC-H210", 403, "forbidden"),
            ErrorKind::UnsupportedMediaType => ("TCC-H211", 415, "unsupported_media_type"),
            ErrorKind::NotResumable => ("TCC-H212", 409, "not_resumable"),
            ErrorKind::NamespaceForbidden => ("TCC-H213", 403, "namespace_forbidden"),
            ErrorKind::NamespaceRequired => ("TCC-H214", 400, "namespace_required"),
        }
    }

    /// The stable diagnostic code (`TCC-H2xx`).
    pub fn code(self) -> &'static str {
        self.facts().0
    }

    /// The HTTP status.
    pub fn status(self) -> u16 {
        self.facts().1
    }

    /// The API's name for the kind (`error.code` of the body).
    pub fn api_code(self) -> &'static str {
        self.facts().2
    }
}

/// An error answer of the HTTP API.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApiError {
    /// A malformed request.
    #[error("{0}")]
    BadRequest(String),
    /// The bearer token is missing or wrong.
    #[error("missing or wrong bearer token")]
    Unauthorized,
    /// No such route or resource.
    #[error("{0}")]
    NotFound(String),
    /// The body is larger than `limit` bytes.
    #[error("request body larger than {limit} bytes")]
    PayloadTooLarge {
        /// The configured limit.
        limit: usize,
    },
    /// The body holds more JSON values than `limit`.
    #[error("request body holds more than {limit} JSON values")]
    TooManyValues {
        /// The limit.
        limit: usize,
    },
    /// The request took longer than `limit`.
    #[error("the request took longer than {limit:?}")]
    Timeout {
        /// The request timeout.
        limit: std::time::Duration,
    },
    /// The service itself failed (a handler, a stored document).
    #[error("{0}")]
    Internal(String),
    /// The host refused or failed.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An operator's resume was refused (why).
    #[error("{0}")]
    NotResumable(String),
    /// The namespace is not the token's, or the route is the operator's
    /// (`crate::namespace`).
    #[error("{0}")]
    NamespaceForbidden(String),
    /// The token has several namespaces and the request named none.
    #[error("{0}")]
    NamespaceRequired(String),
    /// The request was not admitted ([`crate::admission`]).
    #[error(transparent)]
    Refused(#[from] crate::admission::Refusal),
}

impl ApiError {
    /// Its kind (code, status, API name).
    pub fn kind(&self) -> ErrorKind {
        match self {
            ApiError::BadRequest(_) | ApiError::Host(HostError::BadRequest(_)) => {
                ErrorKind::BadRequest
            }
            ApiError::Unauthorized => ErrorKind::Unauthorized,
            ApiError::NotFound(_) => ErrorKind::NotFound,
            ApiError::NotResumable(_) => ErrorKind::NotResumable,
            ApiError::NamespaceForbidden(_) => ErrorKind::NamespaceForbidden,
            ApiError::NamespaceRequired(_) => ErrorKind::NamespaceRequired,
            ApiError::PayloadTooLarge { .. } | ApiError::TooManyValues { .. } => {
                ErrorKind::PayloadTooLarge
            }
            ApiError::Timeout { .. } => ErrorKind::Timeout,
            ApiError::Refused(crate::admission::Refusal::ContentType(_)) => {
                ErrorKind::UnsupportedMediaType
            }
            ApiError::Refused(_) => ErrorKind::Forbidden,
            ApiError::Internal(_) => ErrorKind::Internal,
            ApiError::Host(HostError::Invalid { .. }) => ErrorKind::InvalidArtifact,
            ApiError::Host(HostError::UnknownProgram(_)) => ErrorKind::UnknownProgram,
            ApiError::Host(HostError::Store(e)) | ApiError::Store(e) => match e {
                StoreError::NotFound(_) => ErrorKind::NotFound,
                StoreError::Conflict(_) => ErrorKind::Conflict,
                StoreError::Unsupported(_) => ErrorKind::Unsupported,
                StoreError::Db(_) | StoreError::Corrupt(_) => ErrorKind::Internal,
            },
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.kind().status()
    }

    /// The JSON body: the diagnostic code, the API's name and the message.
    pub fn body(&self) -> J {
        let kind = self.kind();
        json!({
            "code": kind.code(),
            "error": {"code": kind.api_code(), "message": self.to_string()},
        })
    }
}

impl From<crate::namespace::ScopeError> for ApiError {
    fn from(e: crate::namespace::ScopeError) -> ApiError {
        use crate::namespace::ScopeError;
        match e {
            ScopeError::Bad(_) => ApiError::BadRequest(e.to_string()),
            ScopeError::Forbidden(_) => ApiError::NamespaceForbidden(e.to_string()),
            ScopeError::Required(_) => ApiError::NamespaceRequired(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_code_and_name() {
        let codes: std::collections::BTreeSet<_> =
            ErrorKind::ALL.iter().map(|k| k.code()).collect();
        let names: std::collections::BTreeSet<_> =
            ErrorKind::ALL.iter().map(|k| k.api_code()).collect();
        assert_eq!((codes.len(), names.len()), (15, 15));
        for k in ErrorKind::ALL {
            assert!(k.code().starts_with("TCC-H2"), "{k:?}");
            assert!((400..600).contains(&k.status()), "{k:?}");
        }
    }

    #[test]
    fn store_and_host_errors_map_to_their_kinds_and_keep_their_messages() {
        let e = ApiError::from(StoreError::Conflict("execution \"a\" is completed".into()));
        assert_eq!(e.status(), 409);
        assert_eq!(
            e.body(),
            json!({"code": "TCC-H204", "error": {"code": "conflict",
                   "message": "conflict: execution \"a\" is completed"}})
        );
        let e = ApiError::from(HostError::Invalid {
            code: "hash_mismatch".into(),
            message: "m".into(),
        });
        assert_eq!(
            (e.kind(), e.to_string()),
            (ErrorKind::InvalidArtifact, "hash_mismatch: m".into())
        );
        let e = ApiError::from(HostError::Store(StoreError::db("down")));
        assert_eq!(e.kind(), ErrorKind::Internal);
        let e = ApiError::from(HostError::UnknownProgram("p".into()));
        assert_eq!(
            (e.status(), e.to_string()),
            (404, "unknown program \"p\"".into())
        );
    }
}
