// rustc: E0382
async fn run(label: String) -> String {
    let give = move || label;
    let first = give();
    give()
}
