use std::collections::HashMap;

async fn run() -> f64 {
    1.0
}
