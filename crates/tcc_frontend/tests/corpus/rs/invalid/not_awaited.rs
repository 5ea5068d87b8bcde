use tcc_rust_prelude::effect;

async fn run() -> f64 {
    let pending = effect("charge", || 1.0);
    1.0
}
