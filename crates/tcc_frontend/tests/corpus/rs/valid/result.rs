// expect: [{"$tag": "Ok", "$0": 5.0}, {"$tag": "Err", "$0": "divide by zero"}, {"$tag": "Err", "$0": "negative"}, {"$tag": "Ok", "$0": 2.0}]
use tcc_rust_prelude::Vec;

fn divide(a: f64, b: f64) -> Result<f64, String> {
    if b == 0.0 {
        return Err(String::from("divide by zero"));
    }
    Ok(a / b)
}

fn checked(a: f64, b: f64) -> Result<f64, String> {
    let q = divide(a, b)?;
    if q < 0.0 {
        Err("negative".to_string())
    } else {
        Ok(q)
    }
}

fn count_ok(rs: Vec<Result<f64, String>>) -> f64 {
    let mut n = 0.0;
    for r in rs {
        match r {
            Ok(_) => n += 1.0,
            Err(_) => {}
        }
    }
    n
}

async fn run() -> Vec<Result<f64, String>> {
    let mut out = Vec::new();
    out.push(checked(10.0, 2.0));
    out.push(checked(1.0, 0.0));
    out.push(checked(-4.0, 2.0));
    let mut tmp = Vec::new();
    tmp.push(divide(1.0, 1.0));
    tmp.push(divide(1.0, 0.0));
    tmp.push(divide(2.0, 1.0));
    out.push(Ok(count_ok(tmp)));
    out
}
