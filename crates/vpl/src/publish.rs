//! Immutable publication of verified modules (spec section 11).

use crate::ir::{Module, Span};
use crate::text;
use crate::verify::{ModuleInfo, Verified};
use std::sync::Arc;

/// An opaque, immutable snapshot of a verified module: its canonical text
/// and the verified module that reading that text back produced.
///
/// Publishing writes the canonical text and reads it back through the
/// reader and verifier (section 11); that read-back *is* the independent
/// snapshot a backend works on (section 12), so it is kept, privately and
/// immutably, with its [`ModuleInfo`]: backends use it instead of parsing
/// the text again. Nothing is shared with the published module, so
/// mutating it never changes the snapshot. [`VerifiedModule::materialize`]
/// still reads the text into a fresh, separately verified module for
/// callers who want one to edit. Cloning is cheap (shared immutable data);
/// equality is equality of the canonical text.
#[derive(Debug, Clone)]
pub struct VerifiedModule {
    // `Arc<String>` rather than `Arc<str>`: the printed text is kept, not
    // copied (it is as large as the module's text).
    text: Arc<String>,
    snapshot: Arc<Verified>,
}

impl PartialEq for VerifiedModule {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for VerifiedModule {}

impl VerifiedModule {
    /// Verifies `module` and publishes it.
    pub fn new(module: &Module) -> Result<Self, text::Error> {
        let (text, snapshot) = text::publish(module)?;
        Ok(Self::from_parts(text, snapshot))
    }

    /// Publishes a module that verification has just accepted (for example
    /// one [`text::read_verified`] returned), without verifying it again.
    pub fn publish(module: &Verified) -> Result<Self, text::Error> {
        let (text, snapshot) = text::publish_verified(module)?;
        Ok(Self::from_parts(text, snapshot))
    }

    /// [`VerifiedModule::publish`] taking the module: it is dropped once
    /// its text is printed, before the text is read back, so a large
    /// module and its snapshot are never held at once. The publication is
    /// the same as [`VerifiedModule::publish`]'s. A caller that later needs
    /// the module to map a snapshot position into its file
    /// ([`VerifiedModule::source_span`]) reads the file again.
    pub fn publish_owned(module: Verified) -> Result<Self, text::Error> {
        let (text, snapshot) = text::publish_owned(module)?;
        Ok(Self::from_parts(text, snapshot))
    }

    fn from_parts(text: String, snapshot: Verified) -> Self {
        VerifiedModule {
            text: Arc::new(text),
            snapshot: Arc::new(snapshot),
        }
    }

    /// The canonical text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The snapshot: the module read back from the canonical text (its
    /// spans point into [`VerifiedModule::text`]).
    pub fn module(&self) -> &Module {
        self.snapshot.module()
    }

    /// What the verification of the snapshot proved.
    pub fn info(&self) -> &ModuleInfo {
        self.snapshot.info()
    }

    /// The snapshot with its facts.
    pub fn verified(&self) -> &Verified {
        &self.snapshot
    }

    /// Reads the canonical text into a fresh module and verifies it.
    pub fn materialize(&self) -> Result<Module, text::Error> {
        text::read(self.text.as_bytes(), "<published module>")
    }

    /// The position, in `source`, of the object found at `span` of the
    /// canonical text, where `source` is the module this was published
    /// from (so that diagnostics about the snapshot point into the user's
    /// file). `None` when `source` does not correspond to the snapshot or
    /// the object has no position there.
    pub fn source_span(&self, source: &Module, span: Span) -> Option<Span> {
        corresponding(self.module(), source, span)
    }
}

/// The position in `source` of the object at `span` in `snapshot`, where
/// `snapshot` was read back from the canonical text of `source`.
///
/// The canonical text keeps every list in its order (uniforms, interface
/// slots, functions, parameters, blocks, instructions, operands) and
/// declares the used types in the writer's discovery order, so walking
/// both modules in that order visits corresponding objects in step.
/// The types the text does not declare (arrays that array uniforms imply)
/// correspond through their uniforms.
fn corresponding(snapshot: &Module, source: &Module, span: Span) -> Option<Span> {
    let source_types = text::type_declaration_order(source);
    // The snapshot's types in the order the canonical text declares them
    // (its type table is not in declaration order: records come first).
    let mut declared: Vec<_> = snapshot
        .types
        .iter()
        .filter_map(|(h, t)| t.span.map(|s| (s.offset, h)))
        .collect();
    declared.sort_unstable();
    // Types the text does not declare (arrays that array uniforms imply)
    // come after the `types` form; their spans are their uniforms'.
    declared.truncate(source_types.len());
    let mut snapshot_types: Vec<_> = declared.into_iter().map(|(_, h)| h).collect();
    let mut source_types = source_types;
    if snapshot.uniforms.len() == source.uniforms.len() {
        for (ours, theirs) in snapshot.uniforms.iter().zip(&source.uniforms) {
            if !snapshot_types.contains(&ours.ty) {
                snapshot_types.push(ours.ty);
                source_types.push(theirs.ty);
            }
        }
    }
    let ours = spans(snapshot, &snapshot_types);
    let theirs = spans(source, &source_types);
    if ours.len() != theirs.len() {
        return None;
    }
    let at = ours.iter().position(|s| *s == Some(span))?;
    theirs[at]
}

/// Every span of `module`, in a fixed walk order, with the types taken in
/// the order `types`.
fn spans(module: &Module, types: &[crate::ir::Handle<crate::ir::Type>]) -> Vec<Option<Span>> {
    use crate::ir::{InstructionKind, Operand, Reference, SelectorKind, TerminatorKind, TypeInner};
    fn reference(out: &mut Vec<Option<Span>>, r: &Reference) {
        out.push(r.span);
        for s in &r.path {
            out.push(s.span);
            if let SelectorKind::Index(op) = &s.kind {
                out.push(op.span);
            }
        }
    }
    let operand = |out: &mut Vec<Option<Span>>, o: &Operand| out.push(o.span);
    let mut out = vec![module.span];
    for &h in types {
        let Some(ty) = module.types.get(h) else {
            out.push(None);
            continue;
        };
        out.push(ty.span);
        if let TypeInner::Record(r) = &ty.inner {
            out.extend(r.fields.iter().map(|f| f.span));
        }
    }
    out.extend(module.uniforms.iter().map(|u| u.span));
    for stage in module.stages() {
        out.push(stage.span);
        out.extend(stage.interface.iter().map(|v| v.span));
        for (_, f) in stage.functions.iter() {
            out.push(f.span);
            out.extend(f.parameters.iter().map(|p| p.span));
            for (_, b) in f.blocks.iter() {
                out.push(b.span);
                for i in &b.instructions {
                    out.push(i.span);
                    match &i.kind {
                        InstructionKind::DeclareLocal { .. } => {}
                        InstructionKind::Copy { source, .. }
                        | InstructionKind::Swizzle { source, .. }
                        | InstructionKind::Member { source, .. } => operand(&mut out, source),
                        InstructionKind::Load { source, .. } => reference(&mut out, source),
                        InstructionKind::Store { target, value } => {
                            reference(&mut out, target);
                            operand(&mut out, value);
                        }
                        InstructionKind::Binary { lhs, rhs, .. } => {
                            operand(&mut out, lhs);
                            operand(&mut out, rhs);
                        }
                        InstructionKind::Call { arguments, .. }
                        | InstructionKind::Construct { arguments, .. } => {
                            for a in arguments {
                                operand(&mut out, a);
                            }
                        }
                        InstructionKind::Index { source, index, .. } => {
                            operand(&mut out, source);
                            operand(&mut out, index);
                        }
                    }
                }
                if let Some(t) = &b.terminator {
                    out.push(t.span);
                    match &t.kind {
                        TerminatorKind::BranchIf { condition, .. } => out.push(condition.span),
                        TerminatorKind::Return { value: Some(v) } => out.push(v.span),
                        _ => {}
                    }
                }
            }
        }
    }
    out
}
