// Parent workflow: book a shipment by invoking the child workflow `label`
// and waiting for its result (the child's own Result).
use tcc_rust_prelude::{effect, invoke};

struct Label {
    order: String,
    tier: String,
    cost: f64,
}

struct Shipment {
    order: String,
    label: Label,
}

async fn run(order_id: String, weight: f64) -> Result<Shipment, String> {
    effect("order.pack", || ()).await?;
    let child: Result<Label, String> = invoke("label", (order_id.clone(), weight)).await?;
    let label = child?;
    Ok(Shipment { order: order_id, label })
}
