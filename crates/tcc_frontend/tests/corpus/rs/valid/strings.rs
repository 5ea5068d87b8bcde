// expect: ["ab!", "true", "true", "false", "lit"]
use tcc_rust_prelude::Vec;

async fn run() -> Vec<String> {
    let s = String::from("a");
    let t = s + "b";
    let u = t + "!";
    let lit: &'static str = "lit";
    let same = u == "ab!";
    let empty = String::new();
    let e = empty == "";
    let mut out = Vec::new();
    out.push(u);
    out.push(if same { String::from("true") } else { String::from("false") });
    out.push(if e { String::from("true") } else { String::from("false") });
    out.push(if lit != "lit" { String::from("true") } else { String::from("false") });
    out.push(lit.to_string());
    out
}
