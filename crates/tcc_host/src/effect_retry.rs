//! One effect call with its route's durable retry policy applied (issue 33;
//! the policy: [`crate::retry`]).
//!
//! A route without a policy is one provider call, as before. With one, the
//! failed calls already made for the effect's journal key are read first:
//! - the last one was final (no next due time): its failure is the
//!   outcome again, without a call (the host died before journalling it);
//! - its next call is not due yet: [`EffectAnswer::Deferred`] — the drive
//!   ends and the execution is taken up again at that time;
//! - else the provider is called; a failure that the policy retries is
//!   recorded with the next call's due time and deferred, any other outcome
//!   is returned (and journalled by the driver).
//!
//! So every failed call is stored before the host waits for the next one,
//! a restart or the loss of the node in between loses nothing, and no call
//! is made twice, except when the host dies between a provider's answer and
//! the commit of its record: the window every effect has between provider
//! and journal (the idempotency key is passed for that reason).

use crate::crash::hook_at;
use crate::providers::{EffectCall, ProviderOutcome, Providers};
use crate::store::{AttemptRow, Store, StoreError};
use serde_json::Value as J;

/// What became of an effect call.
#[derive(Debug)]
pub(crate) enum EffectAnswer {
    /// The provider's outcome (journalled by the driver).
    Outcome(ProviderOutcome),
    /// A retry is due at this time (ms since the epoch): end the drive and
    /// keep the execution until then.
    Deferred(i64),
}

/// The effect to call.
pub(crate) struct Effect<'a> {
    /// Execution id.
    pub(crate) execution_id: &'a str,
    /// Effect key.
    pub(crate) key: &'a str,
    /// Journal key ([`crate::store::journal_key`]).
    pub(crate) idempotency_key: &'a str,
    /// Tagged input.
    pub(crate) input: &'a J,
    /// The W3C `traceparent` to pass to the provider (issue 35).
    pub(crate) traceparent: Option<&'a str>,
}

/// Calls the effect's provider under its route's retry policy (see the
/// module comment).
pub(crate) fn call(
    store: &dyn Store,
    providers: &Providers,
    effect: &Effect<'_>,
    now_ms: i64,
) -> Result<EffectAnswer, StoreError> {
    let policy = providers.retry_policy(effect.key);
    let earlier = match policy {
        Some(_) => store.attempts(effect.idempotency_key)?,
        None => Vec::new(),
    };
    if let Some(last) = earlier.last() {
        match last.next_due_ms {
            None => {
                return Ok(EffectAnswer::Outcome(ProviderOutcome::Failed(
                    final_message(&last.error, last.attempt),
                )));
            }
            Some(due) if due > now_ms => return Ok(EffectAnswer::Deferred(due)),
            Some(_) => {}
        }
    }
    let attempt = earlier.last().map_or(1, |a| a.attempt.saturating_add(1));
    hook_at("before_effect_provider", &[effect.execution_id, effect.key]);
    let out = providers.call(&EffectCall {
        execution_id: effect.execution_id,
        key: effect.key,
        idempotency_key: effect.idempotency_key,
        input: effect.input,
        traceparent: effect.traceparent,
    });
    hook_at("after_effect_provider", &[effect.execution_id, effect.key]);
    let (Some(policy), ProviderOutcome::Failed(message)) = (policy, &out) else {
        return Ok(EffectAnswer::Outcome(out));
    };
    let at_ms = crate::ids::now_ms();
    let next_due_ms = policy.retries_after(attempt, message).then(|| {
        at_ms.saturating_add(i64::try_from(policy.backoff_ms(attempt)).unwrap_or(i64::MAX))
    });
    store.record_attempt(&AttemptRow {
        idempotency_key: effect.idempotency_key.to_string(),
        execution_id: effect.execution_id.to_string(),
        key: effect.key.to_string(),
        attempt,
        error: crate::storable::message(message).into_owned(),
        at_ms,
        next_due_ms,
    })?;
    hook_at("after_record_attempt", &[effect.execution_id, effect.key]);
    Ok(match next_due_ms {
        Some(due) => EffectAnswer::Deferred(due),
        None => EffectAnswer::Outcome(ProviderOutcome::Failed(final_message(message, attempt))),
    })
}

/// The failure the program sees after `attempts` calls.
fn final_message(error: &str, attempts: u32) -> String {
    if attempts > 1 {
        format!("{error} (after {attempts} attempts)")
    } else {
        error.to_string()
    }
}
