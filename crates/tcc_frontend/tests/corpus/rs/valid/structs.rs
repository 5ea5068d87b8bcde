// expect: [3.0, 12.5, 2.0, 40.0]
use tcc_rust_prelude::Vec;

struct Point {
    x: f64,
    y: f64,
}

struct Job {
    name: String,
    at: Point,
    tries: f64,
}

fn area(p: Point) -> f64 {
    p.x * p.y
}

async fn run() -> Vec<f64> {
    let mut job = Job { name: String::from("build"), at: Point { x: 2.5, y: 5.0 }, tries: 1.0 };
    job.tries += 2.0;
    let mut out = Vec::new();
    out.push(job.tries);
    let label = job.name;
    let p = job.at;
    out.push(area(p));
    job.name = String::from("ship");
    out.push(if job.name == "ship" && label == "build" { 2.0 } else { 0.0 });
    let q = Point { y: 8.0, x: 5.0 };
    out.push(q.x * q.y);
    out
}
