// rustc: rejects
async fn run() -> f64 {
    let x = ;
    x
}
