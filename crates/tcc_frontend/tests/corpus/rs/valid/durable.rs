// effects: {"reserve": 3, "quote.a": 10, "quote.b": 12}
// events: {"approved": true, "rejected": false, "note": "ok"}
// expect: {"$tag": "Ok", "$0": [3.0, 22.0, 1.0, 5.0]}
// effect_log: ["reserve", "quote.a", "quote.b"]
use tcc_rust_prelude::{effect, join, race, sleep, wait_for_event, Vec};

async fn run() -> Result<Vec<f64>, String> {
    let stock: f64 = effect("reserve", || 0.0).await?;
    let quotes = join(effect("quote.a", || 1.0), effect("quote.b", || 2.0)).await?;
    let approved: bool = race(wait_for_event("approved"), wait_for_event("rejected")).await?;
    sleep(5.0).await?;
    let _note: String = wait_for_event("note").await?;
    let mut out = Vec::new();
    out.push(stock);
    let mut sum = 0.0;
    for q in quotes {
        sum += q;
    }
    out.push(sum);
    out.push(if approved { 1.0 } else { 0.0 });
    out.push(5.0);
    Ok(out)
}
