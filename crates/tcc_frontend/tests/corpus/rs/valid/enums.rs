// expect: 111.5
enum Shape {
    Dot,
    Circle(f64),
    Rect { w: f64, h: f64 },
    Named(String, f64),
}

fn size(s: Shape) -> f64 {
    match s {
        Shape::Dot => 0.0,
        Shape::Circle(r) => 3.0 * r * r,
        Shape::Rect { w, h } => w * h,
        Shape::Named(name, v) => {
            if name == "big" {
                v * 10.0
            } else {
                v
            }
        }
    }
}

fn is_dot(s: Shape) -> bool {
    match s {
        Shape::Dot => true,
        _ => false,
    }
}

async fn run() -> f64 {
    let a = size(Shape::Circle(2.0));
    let b = size(Shape::Rect { h: 2.0, w: 3.25 });
    let c = size(Shape::Named(String::from("big"), 9.0));
    let d = size(Shape::Dot);
    let e = if is_dot(Shape::Dot) { 1.0 } else { 100.0 };
    let f = if is_dot(Shape::Circle(1.0)) { 100.0 } else { 0.0 };
    a + b + c + d + e + f + 2.0
}
