//! Generates large valid VPL modules for benchmarks (shared by the
//! `text` bench and the `text_memory` example through `#[path]`).

use std::fmt::Write as _;

/// A valid module of at least `min_bytes` bytes of canonical-looking text:
/// many looping helper functions in the fragment stage.
pub fn module_text(min_bytes: usize) -> String {
    let mut s = String::with_capacity(min_bytes + 4096);
    s.push_str(
        "(module 1\n  (types\n    (type t0 void)\n    (type t1 float)\n    (type t2 int)\n    (type t3 bool)\n    (type t4 vector float 4))\n  (uniforms)\n",
    );
    s.push_str("  (vertex f0\n    (interface\n      (out s0 \"p\" t4 -1 position))\n    (functions\n      (function f0 \"v\" t0\n        (parameters)\n        (registers\n          (register r0 t4))\n        (block b0\n          (construct r0 (float 1.0))\n          (store (stage s0) r0)\n          (return)))))\n");
    s.push_str("  (fragment f0\n    (interface\n      (out s0 \"c\" t4 0 fragment_color))\n    (functions\n      (function f0 \"main\" t0\n        (parameters)\n        (registers\n          (register r0 t4)\n          (register r1 t1))\n        (block b0\n          (call r1 f1 (float 0.5))\n          (construct r0 r1)\n          (store (stage s0) r0)\n          (return)))");
    let mut k = 1;
    while s.len() < min_bytes {
        let _ = write!(
            s,
            "\n      (function f{k} \"helper_{k}\" t1\n        (parameters\n          (parameter p0 t1))\n        (registers\n          (register r0 t1)\n          (register r1 t2)\n          (register r2 t3)\n          (register r3 t4))\n        (block b0\n          (load r0 (parameter p0))\n          (copy r1 (int 0))\n          (branch b1))\n        (block b1"
        );
        for j in 0..40 {
            let c = (j as f32 + k as f32) * 0.125;
            let op = ["add", "multiply", "subtract", "divide"][j % 4];
            let _ = write!(s, "\n          ({op} r0 r0 (float {c:?}))");
        }
        let _ = write!(
            s,
            "\n          (construct r3 r0 r0 r0 (float 1.0))\n          (swizzle r0 r3 \"y\")\n          (add r1 r1 (int 1))\n          (less r2 r1 (int 8))\n          (branch_if r2 b1 b2))\n        (block b2\n          (return r0)))"
        );
        k += 1;
    }
    s.push_str(")))\n");
    s
}
