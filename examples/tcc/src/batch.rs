// Batch: book a label for every parcel by invoking the child workflow `label`
// once per parcel (each call in the loop is its own child execution), and wait
// for each parcel's scan event, whose name is computed from the order.
use tcc_rust_prelude::{invoke, wait_for_event, Vec};

struct Parcel {
    order: String,
    weight: f64,
}

struct Label {
    order: String,
    tier: String,
    cost: f64,
}

struct Summary {
    parcels: f64,
    tiers: Vec<String>,
    cost: f64,
}

async fn run(parcels: Vec<Parcel>) -> Result<Summary, String> {
    let mut tiers = Vec::new();
    let mut cost = 0.0;
    let mut count = 0.0;
    for p in parcels {
        let scan = String::from("scan.") + &p.order;
        let child: Result<Label, String> = invoke("label", (p.order, p.weight)).await?;
        let label = child?;
        tiers.push(label.tier);
        cost = cost + label.cost;
        let _scanned: bool = wait_for_event(scan).await?;
        count = count + 1.0;
    }
    Ok(Summary { parcels: count, tiers, cost })
}
