fn helper() -> f64 {
    1.0
}
