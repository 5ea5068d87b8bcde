//! The uniform values of a case, chosen at random and known to the
//! generator (so statements can rely on them).

use super::rng::Rng;

/// The uniform values a case draws with (known to the generator).
#[derive(Debug, Clone)]
pub(crate) struct UniformValues {
    pub tint: [f64; 4],
    pub count: i64,
    pub weights: [f64; 3],
    pub offset: [i64; 2],
    pub xf: [f64; 4],
    pub ints: [i64; 4],
    pub lights: [([f64; 2], i64); 2],
    pub scale: f64,
    pub limit: i64,
}

impl UniformValues {
    pub(crate) fn random(rng: &mut Rng) -> Self {
        let dyadic = |rng: &mut Rng, lo: i64, hi: i64, d: f64| rng.range(lo, hi) as f64 / d;
        let int = |rng: &mut Rng| match rng.below(3) {
            0 => rng.range(-10, 10),
            1 => rng.range(-100_000, 100_000),
            _ => rng.range(i64::from(i32::MIN), i64::from(i32::MAX)),
        };
        UniformValues {
            tint: [0; 4].map(|_| dyadic(rng, 0, 16, 16.0)),
            count: rng.range(0, 4),
            weights: [0; 3].map(|_| dyadic(rng, -32, 32, 8.0)),
            offset: [int(rng), int(rng)],
            xf: [0; 4].map(|_| dyadic(rng, -8, 8, 4.0)),
            ints: [int(rng), int(rng), int(rng), int(rng)],
            lights: [
                (
                    [dyadic(rng, -16, 16, 4.0), dyadic(rng, -16, 16, 4.0)],
                    rng.range(0, 1),
                ),
                (
                    [dyadic(rng, -16, 16, 4.0), dyadic(rng, -16, 16, 4.0)],
                    rng.range(0, 1),
                ),
            ],
            scale: dyadic(rng, 2, 8, 4.0),
            limit: rng.range(0, 4),
        }
    }

    pub(crate) fn paths(&self) -> Vec<(String, Vec<f64>)> {
        let mut p = vec![
            ("params.tint".to_string(), self.tint.to_vec()),
            ("params.count".to_string(), vec![self.count as f64]),
            (
                "params.offset".to_string(),
                self.offset.map(|v| v as f64).to_vec(),
            ),
            ("params.xf".to_string(), self.xf.to_vec()),
            ("scale".to_string(), vec![self.scale]),
            ("limit".to_string(), vec![self.limit as f64]),
        ];
        for (i, w) in self.weights.iter().enumerate() {
            p.push((format!("params.weights[{i}]"), vec![*w]));
        }
        for (i, v) in self.ints.iter().enumerate() {
            p.push((format!("ints[{i}]"), vec![*v as f64]));
        }
        for (i, (v, n)) in self.lights.iter().enumerate() {
            p.push((format!("lights[{i}].v"), v.to_vec()));
            p.push((format!("lights[{i}].n"), vec![*n as f64]));
        }
        p
    }
}
