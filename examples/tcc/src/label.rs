// Child workflow `label`: price a parcel by weight and print the label.
use tcc_rust_prelude::effect;

struct Label {
    order: String,
    tier: String,
    cost: f64,
}

async fn run(order_id: String, weight: f64) -> Result<Label, String> {
    effect("label.print", || ()).await?;
    let tier = if weight > 10.0 { String::from("heavy") } else { String::from("standard") };
    Ok(Label { order: order_id, tier, cost: 5.0 + weight * 2.0 })
}
