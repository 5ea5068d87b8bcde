//! Type inference: unification at a site, type errors, field types.

use super::*;

impl BodyLowerer<'_> {
    pub(super) fn show(&self, t: &RustType) -> String {
        self.it.types.show(t)
    }

    pub(super) fn unify_at(
        &mut self,
        want: &RustType,
        got: &RustType,
        pos: Pos,
        what: &str,
    ) -> Checked<()> {
        if self.it.types.unify(want, got) {
            return Ok(());
        }
        let hint = if self.it.types.shallow(got) == RustType::Int
            && self.it.types.shallow(want) == RustType::F64
        {
            " (numbers are f64: write the literal with a decimal point)"
        } else {
            ""
        };
        Err(err(
            Code::Type,
            format!(
                "mismatched types: {what} is `{}`, found `{}`{hint}",
                self.show(want),
                self.show(got)
            ),
            pos,
        ))
    }

    pub(super) fn type_error(&self, message: impl Into<String>, pos: Pos) -> FrontendError {
        err(Code::Type, message, pos)
    }

    pub(super) fn field_type(&self, base: &RustType, name: &str, p: Pos) -> Checked<RustType> {
        match self.it.types.shallow(base) {
            RustType::Adt(i) if !self.it.types.adts[i].is_enum => {
                match self.it.types.adts[i].fields.iter().find(|(n, _)| n == name) {
                    Some((_, t)) => Ok(t.clone()),
                    None => Err(self.type_error(
                        format!("no field `{name}` on type `{}`", self.it.types.adts[i].name),
                        p,
                    )),
                }
            }
            RustType::Var(_) => {
                Err(self.type_error("type annotations needed before this field access", p))
            }
            other => Err(self.type_error(
                format!("no field `{name}` on type `{}`", self.show(&other)),
                p,
            )),
        }
    }
}
