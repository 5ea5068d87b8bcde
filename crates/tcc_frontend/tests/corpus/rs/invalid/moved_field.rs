// rustc: E0382
struct Job {
    name: String,
    tries: f64,
}

fn take(s: String) -> f64 {
    if s == "" { 0.0 } else { 1.0 }
}

async fn run() -> f64 {
    let job = Job { name: String::from("a"), tries: 1.0 };
    let a = take(job.name);
    a + take(job.name) + job.tries
}
