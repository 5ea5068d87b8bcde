// expect: ["second", "kept", "fresh", "shadow"]
use tcc_rust_prelude::Vec;

fn keep(s: String, give_back: bool) -> String {
    if give_back {
        return s;
    }
    String::from("kept")
}

async fn run() -> Vec<String> {
    let mut out = Vec::new();
    let a = String::from("first");
    let b = a;
    let mut a = String::from("second");
    out.push(a);
    a = String::from("fresh");
    out.push(keep(b, false));
    out.push(a);
    let x = String::from("shadow");
    let x = x;
    out.push(x);
    out
}
