// expect: "<undefined>"
fn noop(x: f64) {
    if x > 1.0 {
        return;
    }
}

async fn run() {
    noop(2.0);
    noop(0.0);
}
