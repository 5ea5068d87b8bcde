// Checkout: compute the amount from the order, charge it under a key computed
// from the order id, then reserve each item with its own effect (one journal
// entry per item: the key is computed from the item's sku).
use tcc_rust_prelude::{effect, Vec};

struct Line {
    sku: String,
    price: f64,
    qty: f64,
}

struct Order {
    id: String,
    customer: String,
    lines: Vec<Line>,
}

struct Receipt {
    order: String,
    customer: String,
    total: f64,
    reserved: Vec<String>,
}

async fn run(order: Order) -> Result<Receipt, String> {
    let mut total = 0.0;
    let mut skus = Vec::new();
    for line in order.lines {
        total = total + line.price * line.qty;
        skus.push(line.sku);
    }
    let charge_key = String::from("payment.charge.") + &order.id;
    effect(charge_key, || ()).await?;
    let mut reserved = Vec::new();
    for sku in skus {
        let key = String::from("inventory.reserve.") + &sku;
        effect(key, || ()).await?;
        reserved.push(sku);
    }
    Ok(Receipt { order: order.id, customer: order.customer, total, reserved })
}
