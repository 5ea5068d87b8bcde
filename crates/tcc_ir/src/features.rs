//! Engine feature and host capability ids.
//!
//! An artifact lists the features and capabilities it requires; validation
//! rejects ids that are unknown to this implementation and ids the
//! implementing engine or host does not support.

use std::collections::BTreeSet;

/// Base instruction set (always required; used by every frontend).
pub const CONTROL_FLOW: &str = "ts.control_flow";
/// `Effect`.
pub const EFFECT: &str = "durable.effect";
/// `Sleep`.
pub const SLEEP: &str = "durable.sleep";
/// `WaitForEvent`.
pub const WAIT_FOR_EVENT: &str = "durable.wait_for_event";
/// `Invoke`.
pub const INVOKE: &str = "durable.invoke";
/// `Fork` / `JoinAll` / `JoinAny`.
pub const CONCURRENT_GROUP: &str = "durable.concurrent_group";
/// `Throw` / `PushTry` / `PopTry`.
pub const EXCEPTIONS: &str = "ts.exceptions";
/// The later compute group (arithmetic, indexing, executed `Call`, closures).
pub const LANG_COMPUTE: &str = "lang.compute";

/// irkit's catchable cancellation (issue 33, `docs/tcc/engine.md`): a
/// host's `request_cancel` throws a cancellation error at the execution's
/// next durable operation, so `except`/`catch`/`finally` run, and the
/// execution ends `cancelled` when that error leaves the entry function.
/// Frontends declare it for an entry function that awaits inside a `try`.
/// The reference engine does not implement it, so it refuses such an
/// artifact instead of running a cancel without its compensation.
pub const CATCHABLE_CANCEL: &str = "irkit.catchable_cancel";

/// irkit's catchable child failure (issue 33, `docs/tcc/engine.md`): a
/// host's `child_failed` throws the failed (or cancelled) child's status
/// and message at the parent's `Invoke`, where `except`/`catch` can handle
/// it. Frontends declare it for an entry function that invokes inside a
/// `try`. The reference engine does not implement it (its hosts fail the
/// parent), so it refuses such an artifact.
pub const CATCHABLE_CHILD_FAILURE: &str = "irkit.catchable_child_failure";

/// Every engine feature id known to irkit.
pub const KNOWN_ENGINE_FEATURES: [&str; 10] = [
    CONTROL_FLOW,
    EFFECT,
    SLEEP,
    WAIT_FOR_EVENT,
    INVOKE,
    CONCURRENT_GROUP,
    EXCEPTIONS,
    LANG_COMPUTE,
    CATCHABLE_CANCEL,
    CATCHABLE_CHILD_FAILURE,
];

/// Every host capability id known to irkit.
pub const KNOWN_HOST_CAPABILITIES: [&str; 7] = [
    "host.persist_checkpoint",
    "host.persist_checkpoint_delta",
    "host.effect",
    "host.timer",
    "host.event",
    "host.child",
    "host.fetch_artifact",
];

/// A set of feature or capability ids that an engine or host implements.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeatureSet {
    ids: BTreeSet<String>,
}

impl FeatureSet {
    /// A set holding exactly these ids.
    pub fn new<I, S>(ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        FeatureSet {
            ids: ids.into_iter().map(Into::into).collect(),
        }
    }

    /// Every known engine feature.
    pub fn all_engine_features() -> Self {
        Self::new(KNOWN_ENGINE_FEATURES)
    }

    /// Every known host capability.
    pub fn all_host_capabilities() -> Self {
        Self::new(KNOWN_HOST_CAPABILITIES)
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// The ids in byte order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().map(String::as_str)
    }
}

/// Whether `id` is a known engine feature.
pub fn is_known_engine_feature(id: &str) -> bool {
    KNOWN_ENGINE_FEATURES.contains(&id)
}

/// Whether `id` is a known host capability.
pub fn is_known_host_capability(id: &str) -> bool {
    KNOWN_HOST_CAPABILITIES.contains(&id)
}
