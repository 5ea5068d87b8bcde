// Fan-out: ask carriers for a quote at once (the prelude's `join` takes two
// branches, so the third quote follows), then pick the cheapest of the
// carriers that answered with a price (None: no quote).
use tcc_rust_prelude::{effect, join, Vec};

struct Best {
    carrier: String,
    price: f64,
}

fn cheapest(quotes: Vec<Option<f64>>, names: Vec<String>) -> Best {
    let mut best = Best { carrier: String::new(), price: -1.0 };
    let mut i = 0.0;
    for q in quotes {
        match q {
            Some(price) => {
                if best.price < 0.0 || price < best.price {
                    best = Best { carrier: names[i].clone(), price };
                }
            }
            None => {}
        }
        i += 1.0;
    }
    best
}

async fn run() -> Result<Best, String> {
    let pair = join(effect("quote.ups", || Some(0.0)), effect("quote.dhl", || Some(0.0))).await?;
    let fedex: Option<f64> = effect("quote.fedex", || None).await?;
    let mut quotes = Vec::new();
    for q in pair {
        quotes.push(q);
    }
    quotes.push(fedex);
    let mut names = Vec::new();
    names.push(String::from("ups"));
    names.push(String::from("dhl"));
    names.push(String::from("fedex"));
    Ok(cheapest(quotes, names))
}
