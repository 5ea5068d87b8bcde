// expect: [10.0, 25.0, 64.0, 6.0, 20.0]
use tcc_rust_prelude::Vec;

async fn run() -> Vec<f64> {
    let mut out = Vec::new();
    let mut i = 0.0;
    let mut sum = 0.0;
    while i < 5.0 {
        sum += i;
        i += 1.0;
    }
    out.push(sum);
    let mut odd = 0.0;
    for k in 0..10 {
        if k as f64 % 2.0 == 0.0 {
            continue;
        }
        odd += k as f64;
    }
    out.push(odd);
    let mut n = 1.0;
    let found = loop {
        n *= 2.0;
        if n > 50.0 {
            break n;
        }
    };
    out.push(found);
    let mut count = 0.0;
    for _ in 1..=3 {
        let mut j = 0.0;
        loop {
            j += 1.0;
            if j == 2.0 {
                break;
            }
        }
        count += j;
    }
    out.push(count);
    let mut total = 0.0;
    let mut xs = Vec::new();
    xs.push(4.0);
    xs.push(16.0);
    for x in xs {
        total += x;
    }
    out.push(total);
    out
}
