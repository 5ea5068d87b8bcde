// rustc: E0369
enum Light {
    Red,
    Green,
}

async fn run() -> bool {
    let a = Light::Red;
    let b = Light::Green;
    a == b
}
