fn len(s: &String) -> f64 {
    1.0
}

async fn run() -> f64 {
    let s = String::from("a");
    len(&s)
}
