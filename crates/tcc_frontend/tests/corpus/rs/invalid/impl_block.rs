struct P {
    x: f64,
}

impl P {
    fn get(self) -> f64 {
        self.x
    }
}

async fn run() -> f64 {
    1.0
}
