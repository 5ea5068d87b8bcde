mod helpers {
    pub fn one() -> f64 {
        1.0
    }
}

async fn run() -> f64 {
    1.0
}
