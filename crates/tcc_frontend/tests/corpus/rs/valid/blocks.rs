// expect: [1.0, 11.0, 20.0, 3.0, 7.0]
use tcc_rust_prelude::Vec;

enum Step {
    Add(f64),
    Stop,
}

async fn run() -> Vec<f64> {
    let mut out = Vec::new();
    let mut x = 1.0;
    // The left operand is read before the block assigns x.
    let y = x + {
        x = 10.0;
        x - 10.0
    };
    out.push(y);
    out.push(x + {
        let z = 1.0;
        z
    });
    let step = Step::Add(10.0);
    let v = match step {
        Step::Add(n) => {
            let twice = n * 2.0;
            twice
        }
        Step::Stop => 0.0,
    };
    out.push(v);
    let w = {
        let a = 1.0;
        let b = 2.0;
        a + b
    };
    out.push(w);
    let cond = w > 2.0 && {
        let t = w * 2.0;
        t > 5.0
    };
    out.push(if cond { 7.0 } else { -7.0 });
    out
}
