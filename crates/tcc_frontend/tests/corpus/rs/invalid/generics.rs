fn id<T>(x: T) -> T {
    x
}

async fn run() -> f64 {
    id(1.0)
}
