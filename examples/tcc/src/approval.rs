// Approval with a timeout: notify the approver, then race the decision
// event against the timeout event; escalate when the timeout wins. (The
// prelude's `race` takes two branches of one type, so the timer is an
// event sent by the scheduler rather than a `sleep`.)
use tcc_rust_prelude::{effect, race, wait_for_event};

struct Answer {
    request: String,
    outcome: String,
}

async fn run(request: String) -> Result<Answer, String> {
    effect("approval.notify", || ()).await?;
    let decision: String = race(wait_for_event("approval.decision"), wait_for_event("approval.timeout")).await?;
    if decision == "approve" {
        effect("request.grant", || ()).await?;
        return Ok(Answer { request, outcome: String::from("granted") });
    }
    if decision == "reject" {
        return Ok(Answer { request, outcome: String::from("rejected") });
    }
    effect("approval.escalate", || ()).await?;
    Ok(Answer { request, outcome: String::from("escalated") })
}
