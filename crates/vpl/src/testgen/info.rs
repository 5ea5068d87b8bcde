//! What the generator knows statically about each value, so that every
//! output it draws lies where the contract promises equality (section
//! 4.1): integer values (exact; a range where known), floating values
//! (a magnitude bound, an absolute error bound against exact real
//! arithmetic, and a dyadic grid where the value is exact), Booleans
//! (exact when computed from exact values).

/// Facts about an integer value (all components of a vector).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct IntInfo {
    /// Inclusive range, when no wrap-around can have happened.
    pub range: Option<(i64, i64)>,
}

/// Facts about a floating value (all components of a vector or matrix).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FloatInfo {
    /// |value| ≤ bound.
    pub bound: f64,
    /// |value − exact real result| ≤ err (0: every driver computes the same value).
    pub err: f64,
    /// value × 2^grid is an integer (only meaningful when err is 0).
    pub grid: Option<i32>,
}

/// One binary32 rounding at magnitude `bound`, generously (2.5 ulp for
/// GLSL division, contraction, flushed subnormals).
pub(crate) fn rounding(bound: f64) -> f64 {
    bound * 2f64.powi(-21) + 1e-30
}

impl IntInfo {
    pub(crate) fn exact(v: i64) -> Self {
        IntInfo {
            range: Some((v, v)),
        }
    }

    pub(crate) fn any() -> Self {
        IntInfo { range: None }
    }

    fn fit(lo: i64, hi: i64) -> Self {
        if lo < i64::from(i32::MIN) || hi > i64::from(i32::MAX) {
            IntInfo::any()
        } else {
            IntInfo {
                range: Some((lo, hi)),
            }
        }
    }

    pub(crate) fn add(self, o: Self) -> Self {
        match (self.range, o.range) {
            (Some((a, b)), Some((c, d))) => Self::fit(a + c, b + d),
            _ => Self::any(),
        }
    }

    pub(crate) fn sub(self, o: Self) -> Self {
        match (self.range, o.range) {
            (Some((a, b)), Some((c, d))) => Self::fit(a - d, b - c),
            _ => Self::any(),
        }
    }

    pub(crate) fn mul(self, o: Self) -> Self {
        match (self.range, o.range) {
            (Some((a, b)), Some((c, d))) => {
                let p = [a * c, a * d, b * c, b * d];
                Self::fit(
                    p.iter().copied().min().unwrap_or(0),
                    p.iter().copied().max().unwrap_or(0),
                )
            }
            _ => Self::any(),
        }
    }

    /// Division by a nonzero constant other than −1.
    pub(crate) fn div_const(self, k: i64) -> Self {
        match self.range {
            Some((a, b)) => {
                let (x, y) = (a / k, b / k);
                Self::fit(x.min(y), x.max(y))
            }
            None => IntInfo {
                range: Some((i64::from(i32::MIN) / k.abs(), i64::from(i32::MAX) / k.abs())),
            },
        }
    }

    pub(crate) fn join(self, o: Self) -> Self {
        match (self.range, o.range) {
            (Some((a, b)), Some((c, d))) => Self::fit(a.min(c), b.max(d)),
            _ => Self::any(),
        }
    }

    /// The largest magnitude, if known.
    pub(crate) fn magnitude(self) -> Option<i64> {
        self.range.map(|(a, b)| a.abs().max(b.abs()))
    }
}

impl FloatInfo {
    /// An exact dyadic constant.
    pub(crate) fn constant(v: f64) -> Self {
        let mut grid = 0;
        while (v * 2f64.powi(grid)).fract() != 0.0 && grid < 60 {
            grid += 1;
        }
        FloatInfo {
            bound: v.abs(),
            err: 0.0,
            grid: Some(grid),
        }
    }

    /// Whether every driver computes this value identically.
    pub(crate) fn exact(self) -> bool {
        self.err == 0.0
    }

    fn result(bound: f64, err: f64, grid: Option<i32>) -> Self {
        match grid {
            Some(g) if err == 0.0 && g <= 60 && bound * 2f64.powi(g) < 2f64.powi(24) => FloatInfo {
                bound,
                err: 0.0,
                grid: Some(g),
            },
            _ => FloatInfo {
                bound,
                err: err + rounding(bound),
                grid: None,
            },
        }
    }

    fn grids(a: Option<i32>, b: Option<i32>, f: impl Fn(i32, i32) -> i32) -> Option<i32> {
        Some(f(a?, b?))
    }

    pub(crate) fn add(self, o: Self) -> Self {
        Self::result(
            self.bound + o.bound,
            self.err + o.err,
            Self::grids(self.grid, o.grid, i32::max),
        )
    }

    pub(crate) fn mul(self, o: Self) -> Self {
        Self::result(
            self.bound * o.bound,
            self.bound * o.err + o.bound * self.err + self.err * o.err,
            Self::grids(self.grid, o.grid, |a, b| a + b),
        )
    }

    /// A sum of `n` products (matrix products).
    pub(crate) fn dot(self, o: Self, n: u32) -> Self {
        let p = self.mul(o);
        let mut sum = p;
        for _ in 1..n {
            sum = sum.add(p);
        }
        sum
    }

    /// Division by a value whose magnitude is at least 1.
    pub(crate) fn div_at_least_one(self, d: Self) -> Self {
        FloatInfo {
            bound: self.bound,
            err: self.err + self.bound * d.err + rounding(self.bound),
            grid: None,
        }
    }

    /// Multiplication by 2^k (exact, grid shifted).
    pub(crate) fn scale_pow2(self, k: i32) -> Self {
        Self::result(
            self.bound * 2f64.powi(k),
            self.err * 2f64.powi(k),
            self.grid.map(|g| g - k),
        )
    }

    pub(crate) fn join(self, o: Self) -> Self {
        let err = self.err.max(o.err);
        FloatInfo {
            bound: self.bound.max(o.bound),
            err,
            grid: if err == 0.0 {
                Self::grids(self.grid, o.grid, i32::max)
            } else {
                None
            },
        }
    }

    /// Conversion of an integer (correctly rounded on every driver).
    pub(crate) fn from_int(i: IntInfo) -> Self {
        match i.magnitude() {
            Some(m) if m < (1 << 24) => FloatInfo {
                bound: m as f64,
                err: 0.0,
                grid: Some(0),
            },
            _ => FloatInfo {
                bound: 2f64.powi(31),
                err: 0.0,
                grid: None,
            },
        }
    }

    /// After interpolation across a primitive (plane equations differ by
    /// rasterizer).
    pub(crate) fn interpolated(self) -> Self {
        FloatInfo {
            bound: self.bound,
            err: self.err + self.bound * 2f64.powi(-16) + 1e-6,
            grid: None,
        }
    }
}
