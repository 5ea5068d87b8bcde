//! The TCC execution engine (`tcc-program-format.md`, facts note (b)–(f)).
//!
//! Data flow: a decoded artifact is validated and prepared as a
//! [`Program`]; an [`Execution`] starts from it (parameters bound by the
//! artifact's language rules) or resumes from a [`Continuation`] (after the
//! resume checks). [`Execution::run_until_host`] steps until a host
//! boundary and returns an [`Outcome`]; the host answers with
//! [`Execution::respond`]. Every durable transition ends in a
//! `persist_checkpoint` request carrying a snapshot or a delta; only
//! `persist_confirmed` commits one. [`LocalHost`] is a simple in-process
//! host (effects from a map, events from a map, timers fire at once).
//!
//! Invariants: a hostile artifact or continuation cannot exceed
//! [`Limits`]; fatal engine errors are never catchable by the program;
//! everything written is canonical JSON.
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod absorb_text;
pub mod continuation;
mod decode_text;
pub mod engine;
pub mod error;
pub mod fast;
pub mod heap_digest;
pub mod json;
pub mod lang;
pub mod limits;
pub mod liveness;
pub mod local_host;
pub mod object_map;
pub mod position;
pub mod protocol;
pub mod value;

pub use continuation::{
    CancelPhase, Continuation, Status, apply_delta, apply_delta_text, compute_delta,
    compute_delta_text, decode_delta,
};
pub use engine::{CANCELLED_ERROR, Execution, Program, engine_features};
pub use error::{EngineError, FatalKind};
pub use lang::Language;
pub use limits::Limits;
pub use local_host::{LocalHost, RunReport};
pub use object_map::ObjectMap;
pub use position::FuncPos;
pub use protocol::{HOST_PROTOCOL_VERSION, HostRequest, HostResponse, Outcome, TextWake};
pub use value::{Cell, Heap, Value};
