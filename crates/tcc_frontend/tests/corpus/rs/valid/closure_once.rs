// args: ["ticket"]
// expect: ["ticket", "ok"]
use tcc_rust_prelude::Vec;

async fn run(label: String) -> Vec<String> {
    let give = move || label;
    let mut out = Vec::new();
    out.push(give());
    let status = String::from("ok");
    let show = move |prefix: f64| if prefix > 0.0 { status } else { String::from("no") };
    out.push(show(1.0));
    out
}
