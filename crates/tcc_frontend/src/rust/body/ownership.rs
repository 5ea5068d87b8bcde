//! Move and borrow checking: moved values, moves in loops, closure borrows, branch joins.

use super::*;

impl BodyLowerer<'_> {
    pub(super) fn check_not_moved(
        &self,
        fx: &FnFrame,
        var: VarRef,
        field: Option<&str>,
        name: &str,
        pos: Pos,
    ) -> Checked<()> {
        if fx.moved.contains(&(var, String::new())) {
            return Err(err(
                Code::Moved,
                format!("use of moved value `{name}`"),
                pos,
            ));
        }
        if let Some(f) = field {
            let prefix = format!("{f}.");
            if fx.moved.iter().any(|(v, k)| {
                *v == var && (k == f || k.starts_with(&prefix) || f.starts_with(&format!("{k}.")))
            }) {
                return Err(err(
                    Code::Moved,
                    format!("use of moved value `{name}.{f}`"),
                    pos,
                ));
            }
        }
        Ok(())
    }

    /// Records a move of `var` (or of one of its fields).
    pub(super) fn mark_moved(
        &mut self,
        b: &Bind,
        field: Option<&str>,
        name: &str,
        pos: Pos,
    ) -> Checked<()> {
        if b.captured {
            // Moving out of a capture makes the closure `FnOnce`.
            self.fxm().once = true;
        }
        let depth = self.fx().loops.len();
        let leaves = match self.leaving {
            Some(LEAVES_ALL) => true,
            Some(l) => l == depth && b.loop_depth + 1 == depth,
            None => false,
        };
        if depth > b.loop_depth && !leaves {
            return Err(err(
                Code::Moved,
                format!(
                    "`{name}` is moved inside a loop: it would be used again in the next iteration"
                ),
                pos,
            ));
        }
        if field.is_none()
            && self
                .fxm()
                .moved
                .iter()
                .any(|(v, k)| *v == b.var && !k.is_empty())
        {
            return Err(err(
                Code::Moved,
                format!("use of partially moved value `{name}`"),
                pos,
            ));
        }
        let key = field.unwrap_or("").to_string();
        self.fxm().moved.insert((b.var, key));
        Ok(())
    }

    pub(super) fn borrow_marks(&self) -> Vec<(usize, usize)> {
        self.fx()
            .borrows
            .iter()
            .map(|b| (b.calls, b.conflicts.len()))
            .collect()
    }

    pub(super) fn borrow_error(var: &str, closure: &str, pos: Pos) -> FrontendError {
        err(
            Code::Moved,
            format!(
                "cannot assign to `{var}` because it is borrowed by closure `{closure}`, which is called later (make it a `move` closure to capture a copy)"
            ),
            pos,
        )
    }

    /// An assignment to `var`: a conflict for every closure borrowing it.
    pub(super) fn note_assigned(&mut self, var: VarRef, name: &str, pos: Pos) {
        for b in &mut self.fxm().borrows {
            if b.borrowed.contains(&var) {
                b.conflicts.push((name.to_string(), pos));
            }
        }
    }

    /// A call of closure `var`: refused after an assignment to what it borrows.
    pub(super) fn note_called(&mut self, frame: usize, var: VarRef) -> Checked<()> {
        let Some(b) = self.fx[frame].borrows.iter_mut().find(|b| b.closure == var) else {
            return Ok(());
        };
        b.calls += 1;
        match b.conflicts.first() {
            Some((name, pos)) => Err(Self::borrow_error(name, &b.closure_name, *pos)),
            None => Ok(()),
        }
    }

    /// At the end of the innermost loop: a closure bound outside it, called in
    /// it, is called again after an assignment in it (the next iteration).
    pub(super) fn check_loop_borrows(&self) -> Checked<()> {
        let depth = self.fx().loops.len();
        let Some(cx) = self.fx().loops.last() else {
            return Ok(());
        };
        for (b, &(calls, conflicts)) in self.fx().borrows.iter().zip(&cx.borrow_marks) {
            if b.loop_depth < depth
                && b.calls > calls
                && let Some((name, pos)) = b.conflicts.get(conflicts)
            {
                return Err(Self::borrow_error(name, &b.closure_name, *pos));
            }
        }
        Ok(())
    }

    /// Lowers both arms of a branch, keeping moves of the arms that do not diverge.
    pub(super) fn branches<T>(
        &mut self,
        arms: usize,
        mut f: impl FnMut(&mut Self, usize) -> Checked<Arm<T>>,
    ) -> Checked<Vec<Arm<T>>> {
        let before = self.fx().moved.clone();
        let mut after = before.clone();
        let mut any_live = false;
        let mut out = Vec::new();
        for i in 0..arms {
            self.fxm().moved = before.clone();
            let r = f(self, i)?;
            if self.it.types.shallow(&r.2) != RustType::Never {
                after.extend(self.fx().moved.iter().cloned());
                any_live = true;
            }
            out.push(r);
        }
        self.fxm().moved = if any_live { after } else { before };
        Ok(out)
    }
}
