// Order saga: reserve stock, charge the card, ship; on a failure, undo the
// completed steps in reverse order (refund, then release). An awaited
// effect without `?` is a Result: Err carries the failure message.
use tcc_rust_prelude::{effect, Vec};

struct Order {
    id: String,
}

enum Outcome {
    Shipped { order: String, status: String, steps: Vec<String> },
    Compensated { order: String, status: String, steps: Vec<String>, undone: Vec<String>, error: String },
}

async fn run(order: Order) -> Outcome {
    let mut done: Vec<String> = Vec::new();
    let mut error: Option<String> = None;
    match effect("inventory.reserve", || ()).await {
        Ok(_) => done.push(String::from("reserve")),
        Err(e) => error = Some(e),
    }
    if done.len() == 1.0 {
        match effect("payment.charge", || ()).await {
            Ok(_) => done.push(String::from("charge")),
            Err(e) => error = Some(e),
        }
    }
    if done.len() == 2.0 {
        match effect("shipping.ship", || ()).await {
            Ok(_) => done.push(String::from("ship")),
            Err(e) => error = Some(e),
        }
    }
    match error {
        None => Outcome::Shipped { order: order.id, status: String::from("shipped"), steps: done },
        Some(e) => {
            let mut undone = Vec::new();
            if done.len() >= 2.0 {
                let _refund = effect("payment.refund", || ()).await;
                undone.push(String::from("refund"));
            }
            if done.len() >= 1.0 {
                let _release = effect("inventory.release", || ()).await;
                undone.push(String::from("release"));
            }
            Outcome::Compensated { order: order.id, status: String::from("compensated"), steps: done, undone, error: e }
        }
    }
}
