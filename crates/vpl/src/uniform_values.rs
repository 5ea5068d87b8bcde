//! Host values for a module's uniforms, shared by every driver (GL,
//! Vulkan, WebGL, the CPU executor) and the playground
//! (docs/vpl/render.md):
//!
//! - the *leaves* a value can be given to: every scalar, vector and matrix
//!   reachable from a value uniform through record fields and array
//!   elements, by logical path (`material.color`, `lights[1].color`);
//! - the one rule for a leaf the user did not give: floats 1, integers 0,
//!   Booleans false, matrices the identity (samplers, which have no value,
//!   get the drivers' checkerboard texture);
//! - the check of a given value against its leaf's declared type: a
//!   `float` takes a finite number within binary32's range, an `int` a whole
//!   number in −2³¹..2³¹−1, a `bool` `true`/`false` (1/0). Nothing is
//!   truncated, rounded into another type or saturated silently.

use crate::ir::{Module, ScalarKind, TypeInner};

/// The most leaves one module's uniforms may expand to (a larger array of
/// uniforms is refused rather than enumerated).
pub const MAX_LEAVES: usize = 65_536;

/// One scalar, vector or matrix a value can be given to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Logical path from the uniform's name (`material.color`, `weights[3]`).
    pub path: String,
    /// Component kind (matrices are `float`).
    pub kind: ScalarKind,
    /// Components per column: 1 for a scalar, the size of a vector, the
    /// rows of a matrix.
    pub rows: u8,
    /// Columns: 1 except for matrices.
    pub columns: u8,
}

impl Leaf {
    /// How many values the leaf takes (matrices column-major).
    pub fn count(&self) -> usize {
        usize::from(self.rows) * usize::from(self.columns)
    }

    /// The leaf's type as VPL text spells it (`int`, `vector float 3`,
    /// `matrix 4 4`).
    pub fn type_spelling(&self) -> String {
        match (self.columns, self.rows) {
            (1, 1) => self.kind.keyword().to_string(),
            (1, size) => format!("vector {} {size}", self.kind.keyword()),
            (columns, rows) => format!("matrix {rows} {columns}"),
        }
    }

    /// The value a leaf the user did not give takes: floats 1, integers 0,
    /// Booleans false, matrices the identity.
    pub fn default_values(&self) -> Vec<f64> {
        let mut values = Vec::with_capacity(self.count());
        for column in 0..self.columns {
            for row in 0..self.rows {
                values.push(match self.kind {
                    ScalarKind::Float if self.columns > 1 => f64::from(u8::from(column == row)),
                    ScalarKind::Float => 1.0,
                    ScalarKind::Int | ScalarKind::Bool => 0.0,
                });
            }
        }
        values
    }

    /// Checks `values` against the leaf's declared type and component count.
    pub fn check(&self, values: &[f64]) -> Result<(), String> {
        if values.len() != self.count() {
            return Err(format!(
                "`{}` has type {} and takes {} value(s), {} given",
                self.path,
                self.type_spelling(),
                self.count(),
                values.len()
            ));
        }
        for value in values {
            check_component(self.kind, *value).map_err(|why| {
                format!("`{}` has type {}: {why}", self.path, self.type_spelling())
            })?;
        }
        Ok(())
    }
}

/// Checks one component of kind `kind`.
pub fn check_component(kind: ScalarKind, value: f64) -> Result<(), String> {
    match kind {
        ScalarKind::Float if value.is_finite() && value.abs() <= f64::from(f32::MAX) => Ok(()),
        ScalarKind::Float => Err(format!(
            "{value} is not a finite float within binary32's range (±{:e})",
            f32::MAX
        )),
        ScalarKind::Int
            if value.fract() == 0.0
                && value >= f64::from(i32::MIN)
                && value <= f64::from(i32::MAX) =>
        {
            Ok(())
        }
        ScalarKind::Int => Err(format!(
            "{value} is not an int (a whole number in {}..={})",
            i32::MIN,
            i32::MAX
        )),
        ScalarKind::Bool if value == 0.0 || value == 1.0 => Ok(()),
        ScalarKind::Bool => Err(format!("{value} is not a bool (true, false, 1 or 0)")),
    }
}

/// Every leaf of `module`'s value uniforms, in declaration order.
pub fn leaves(module: &Module) -> Result<Vec<Leaf>, String> {
    let mut out = Vec::new();
    for uniform in &module.uniforms {
        walk(module, uniform.ty, uniform.name.clone(), &mut out)?;
    }
    Ok(out)
}

fn walk(
    module: &Module,
    ty: crate::ir::Handle<crate::ir::Type>,
    path: String,
    out: &mut Vec<Leaf>,
) -> Result<(), String> {
    let Some(ty) = module.types.get(ty) else {
        return Err(format!("`{path}` has an unknown type"));
    };
    let leaf = |kind, rows, columns| Leaf {
        path: path.clone(),
        kind,
        rows,
        columns,
    };
    match &ty.inner {
        TypeInner::Scalar(kind) => out.push(leaf(*kind, 1, 1)),
        TypeInner::Vector { kind, size } => out.push(leaf(*kind, *size, 1)),
        TypeInner::Matrix { rows, columns } => out.push(leaf(ScalarKind::Float, *rows, *columns)),
        TypeInner::Sampler(_) | TypeInner::Void => {}
        TypeInner::Array { element, length } => {
            for index in 0..*length {
                if out.len() >= MAX_LEAVES {
                    return Err(format!(
                        "the uniforms expand to more than {MAX_LEAVES} values (at `{path}`)"
                    ));
                }
                walk(module, *element, format!("{path}[{index}]"), out)?;
            }
        }
        TypeInner::Record(record) => {
            for field in &record.fields {
                walk(module, field.ty, format!("{path}.{}", field.name), out)?;
            }
        }
    }
    if out.len() > MAX_LEAVES {
        return Err(format!(
            "the uniforms expand to more than {MAX_LEAVES} values (at `{path}`)"
        ));
    }
    Ok(())
}

/// Why a given value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// No leaf and no uniform has this path; `candidates` are the paths
    /// a suggestion may be drawn from.
    #[error("no uniform value `{path}` in this program")]
    Unknown {
        /// The path as given.
        path: String,
        /// Every leaf path, for a "did you mean".
        candidates: Vec<String>,
    },
    /// The path names a record, an array or a sampler, not a leaf.
    #[error("`{path}` is not a scalar, vector or matrix; give its members one by one: {members}")]
    NotALeaf {
        /// The path as given.
        path: String,
        /// The first leaves below it, comma-separated.
        members: String,
    },
    /// The value does not fit the leaf's type.
    #[error("{0}")]
    Type(String),
}

impl ValueError {
    /// The stable diagnostic code (`VPL-UNIFORM-NAME` for a path that names
    /// no value, `VPL-UNIFORM-VALUE` for a value that does not fit).
    pub fn code(&self) -> &'static str {
        match self {
            ValueError::Unknown { .. } | ValueError::NotALeaf { .. } => crate::code::UNIFORM_NAME,
            ValueError::Type(_) => crate::code::UNIFORM_VALUE,
        }
    }
}

/// The values to draw with: every leaf once, the given values checked and
/// the others defaulted.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// `(path, values)` for every leaf, given ones first in the order given.
    pub values: Vec<(String, Vec<f64>)>,
    /// The paths that took the default.
    pub defaulted: Vec<String>,
}

/// Checks `given` against `leaves` and adds the default for every leaf not
/// given. A path given twice keeps its last value.
pub fn assign(leaves: &[Leaf], given: &[(String, Vec<f64>)]) -> Result<Assignment, ValueError> {
    let mut chosen: Vec<Option<&[f64]>> = vec![None; leaves.len()];
    for (path, values) in given {
        let Some(index) = leaves.iter().position(|l| &l.path == path) else {
            let below: Vec<&str> = leaves
                .iter()
                .filter(|l| {
                    l.path.starts_with(path.as_str())
                        && matches!(l.path.as_bytes().get(path.len()), Some(b'.' | b'['))
                })
                .map(|l| l.path.as_str())
                .collect();
            if below.is_empty() {
                return Err(ValueError::Unknown {
                    path: path.clone(),
                    candidates: leaves.iter().map(|l| l.path.clone()).collect(),
                });
            }
            let mut members = below.iter().take(4).copied().collect::<Vec<_>>().join(", ");
            if below.len() > 4 {
                members.push_str(&format!(", ... ({} in all)", below.len()));
            }
            return Err(ValueError::NotALeaf {
                path: path.clone(),
                members,
            });
        };
        leaves[index].check(values).map_err(ValueError::Type)?;
        chosen[index] = Some(values);
    }
    let mut assignment = Assignment {
        values: Vec::with_capacity(leaves.len()),
        defaulted: Vec::new(),
    };
    for (leaf, value) in leaves.iter().zip(&chosen) {
        match value {
            Some(v) => assignment.values.push((leaf.path.clone(), v.to_vec())),
            None => {
                assignment
                    .values
                    .push((leaf.path.clone(), leaf.default_values()));
                assignment.defaulted.push(leaf.path.clone());
            }
        }
    }
    Ok(assignment)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(uniforms: &str) -> crate::VerifiedModule {
        let text = format!(
            "(module 1
  (types
    (type Unit void) (type I32 int) (type Flag bool) (type F32 float)
    (type Point vector float 2) (type Rgba vector float 4) (type M3 matrix 3 3)
    (type Light record \"Light\" (field \"color\" Rgba) (field \"on\" Flag)))
  (uniforms {uniforms})
  (vertex vs
    (interface (in corner \"corner\" Point 0 none) (out pos \"pos\" Rgba -1 position))
    (functions
      (function vs \"vertex_main\" Unit (parameters)
        (registers (register r1 Point) (register r2 Rgba))
        (block only (load r1 (stage corner)) (construct r2 r1 (float 0.0) (float 1.0))
          (store (stage pos) r2) (return)))))
  (fragment fs
    (interface (out color \"color\" Rgba 0 fragment_color))
    (functions
      (function fs \"fragment_main\" Unit (parameters)
        (registers (register r4 Rgba))
        (block only (construct r4 (float 1.0) (float 1.0) (float 1.0) (float 1.0))
          (store (stage color) r4) (return))))))"
        );
        let verified = crate::text::read_verified(text.as_bytes(), "t.vpl").expect("valid");
        crate::VerifiedModule::publish(&verified).expect("publishes")
    }

    fn all_leaves() -> Vec<Leaf> {
        let m = module(
            "(scalar steps \"steps\" I32) (scalar tint \"tint\" Rgba) (scalar turn \"turn\" M3)
             (array lights \"lights\" Light 2)",
        );
        leaves(m.module()).expect("leaves")
    }

    #[test]
    fn leaves_follow_fields_and_elements() {
        let paths: Vec<String> = all_leaves().into_iter().map(|l| l.path).collect();
        assert_eq!(
            paths,
            [
                "steps",
                "tint",
                "turn",
                "lights[0].color",
                "lights[0].on",
                "lights[1].color",
                "lights[1].on"
            ]
        );
    }

    #[test]
    fn values_are_checked_against_the_declared_type() {
        let leaves = all_leaves();
        let given = |p: &str, v: &[f64]| assign(&leaves, &[(p.to_string(), v.to_vec())]);
        assert!(given("steps", &[100.0]).is_ok());
        let e = given("steps", &[2.5]).unwrap_err().to_string();
        assert!(e.contains("2.5 is not an int"), "{e}");
        let e = given("steps", &[99_999_999_999.0]).unwrap_err().to_string();
        assert!(e.contains("not an int"), "{e}");
        let e = given("lights[1].on", &[2.0]).unwrap_err().to_string();
        assert!(e.contains("not a bool"), "{e}");
        let e = given("tint", &[1.0, 1e39, 0.0, 1.0])
            .unwrap_err()
            .to_string();
        assert!(e.contains("binary32"), "{e}");
        let e = given("tint", &[1.0]).unwrap_err().to_string();
        assert!(e.contains("takes 4 value(s), 1 given"), "{e}");
        let e = given("lights[0]", &[1.0]).unwrap_err();
        assert!(
            matches!(&e, ValueError::NotALeaf { members, .. } if members.starts_with("lights[0].color")),
            "{e}"
        );
        assert!(matches!(
            given("stpes", &[1.0]),
            Err(ValueError::Unknown { .. })
        ));
    }

    #[test]
    fn leaves_not_given_take_the_one_default_rule() {
        let leaves = all_leaves();
        let a = assign(&leaves, &[("steps".to_string(), vec![3.0])]).expect("assigns");
        assert_eq!(a.values[0], ("steps".to_string(), vec![3.0]));
        assert_eq!(a.values[1].1, vec![1.0; 4]);
        assert_eq!(
            a.values[2].1,
            vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        );
        assert_eq!(a.values[4].1, vec![0.0]);
        assert_eq!(a.defaulted.len(), leaves.len() - 1);
        assert!(!a.defaulted.contains(&"steps".to_string()));
    }
}
