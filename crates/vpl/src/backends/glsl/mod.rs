//! GLSL 4.20 core backend (spec section 12).
//!
//! [`compile`] takes a published [`VerifiedModule`] and works on its
//! snapshot and the snapshot's [`ModuleInfo`]: it checks the target
//! restrictions of section 12.4 once, resolves interface locations (12.2)
//! and emits one vertex and one fragment shader (12.3) together with
//! reflection (12.1):
//!
//! * `error` — the target version and [`TargetError`] (a leaf every part uses);
//! * [`artifact`] — the [`ProgramArtifact`], bindings and [`GlslType`];
//! * [`reflect`] — std140 layout and the JSON reflection document;
//! * [`naming`] — generated identifiers and literal spellings;
//! * [`locations`] — interface location allocation and linkage;
//! * [`restrictions`] — target restrictions and sampler aliases;
//! * [`limits`] — the minimum hardware limits of the OpenGL 4.2 profile
//!   (and of the naga targets' GLSL ES 3.0 and Vulkan 1.0 profiles);
//! * [`emit`] — code emission and control-flow lowering.

pub mod artifact;
mod emit;
mod error;
pub mod limits;
pub mod locations;
pub mod naming;
pub mod reflect;
pub mod restrictions;
mod types;

pub use artifact::{
    Binding, GlslField, GlslRecord, GlslType, InterfaceBinding, ProgramArtifact, UniformBinding,
};
pub use error::{TargetError, TargetErrorKind, VERSION_420};
pub use limits::Profile;
pub use reflect::{Std140Layout, std140_layout};

use crate::VerifiedModule;
use crate::ir::Module;
use crate::verify::{ModuleInfo, Verified};

/// Why [`compile`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// A module could not be read or published.
    #[error("cannot materialize the published module: {0}")]
    Materialize(#[from] crate::text::Error),
    /// The module given to [`compile_module`] failed verification.
    #[error("the module is not valid VPL: {0}")]
    Verify(Box<crate::verify::VerifyError>),
    /// A target restriction.
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// Compiles a published module for `version` (only [`VERSION_420`]).
///
/// The backend works on the publication's snapshot, the module that
/// reading the canonical text back produced, and on what its verification
/// proved; nothing is parsed or verified again. Spans in target errors
/// point into [`VerifiedModule::text`];
/// [`VerifiedModule::source_span`] maps them into the module that was
/// published.
pub fn compile(module: &VerifiedModule, version: u32) -> Result<ProgramArtifact, CompileError> {
    check_version(version)?;
    Ok(compile_verified(module.module(), module.info())?)
}

/// Verifies `module` and compiles it directly, without the canonical-text
/// round trip: the same checks as publishing it and calling [`compile`].
/// The code is identical for a materialized module; for other modules the
/// record numbering (`vpl_R<k>`) follows the module's own type-table order
/// rather than the canonical one. Spans in target errors point into the
/// text the module was read from, if any.
pub fn compile_module(module: &Module, version: u32) -> Result<ProgramArtifact, CompileError> {
    check_version(version)?;
    let info = crate::verify::verify(module).map_err(|e| CompileError::Verify(Box::new(e)))?;
    Ok(compile_verified(module, &info)?)
}

fn check_version(version: u32) -> Result<(), TargetError> {
    if version != VERSION_420 {
        return Err(TargetError::new(
            TargetErrorKind::UnsupportedVersion,
            None,
            format!("GLSL version {version} is not implemented; the target is 420 core"),
        ));
    }
    Ok(())
}

/// Verifies `module` and runs every target check of sections 12.2 and
/// 12.4 without emitting code: exactly the modules [`compile`] accepts
/// pass. Spans in the error point into the text the module was read from.
/// A module that fails verification is reported as
/// [`TargetErrorKind::InvalidModule`].
pub fn check_target(module: &Module) -> Result<(), TargetError> {
    let info = crate::verify::verify(module).map_err(|e| {
        TargetError::new(
            TargetErrorKind::InvalidModule,
            e.span,
            format!("the module is not valid VPL: {e}"),
        )
    })?;
    check_facts(module, &info).map(|_| ())
}

/// [`check_target`] for a module that verification has just accepted.
pub fn check_verified(module: &Verified) -> Result<(), TargetError> {
    check_facts(module.module(), module.info()).map(|_| ())
}

/// The target checks, including the OpenGL 4.2 minimum limits (section
/// 13); what emission needs of them.
fn check_facts(
    module: &Module,
    info: &ModuleInfo,
) -> Result<(types::TypeMap, locations::Locations), TargetError> {
    let (types, locations) = check_restrictions(module, info)?;
    limits::check(module, &types, &locations, Profile::Gl42)?;
    Ok((types, locations))
}

/// The section 12.2 and 12.4 checks alone.
fn check_restrictions(
    module: &Module,
    info: &ModuleInfo,
) -> Result<(types::TypeMap, locations::Locations), TargetError> {
    let types = types::TypeMap::build(module, info)?;
    restrictions::check(module, info, &types)?;
    let locations = locations::resolve(module, &types)?;
    Ok((types, locations))
}

/// Checks a module that passes the section 12.2 and 12.4 checks against
/// the minimum limits of `profile` (section 13).
pub fn check_limits(
    module: &Module,
    info: &ModuleInfo,
    profile: Profile,
) -> Result<(), TargetError> {
    let (types, locations) = check_restrictions(module, info)?;
    limits::check(module, &types, &locations, profile)
}

/// Every target check of sections 12.2 and 12.4 and the resolved
/// interface locations (the naga targets refuse what GLSL 4.20 refuses,
/// with the same codes, and link by the same rules; their hardware
/// limits are their own profiles', [`check_limits`]).
pub(crate) fn target_locations(
    module: &Module,
    info: &ModuleInfo,
) -> Result<locations::Locations, TargetError> {
    check_restrictions(module, info).map(|(_, locations)| locations)
}

/// Checks and emits a verified module (large stages on two threads).
fn compile_verified(module: &Module, info: &ModuleInfo) -> Result<ProgramArtifact, TargetError> {
    compile_verified_with(module, info, true)
}

/// [`compile_verified`], emitting on one thread unless `parallel` is set.
fn compile_verified_with(
    module: &Module,
    info: &ModuleInfo,
    parallel: bool,
) -> Result<ProgramArtifact, TargetError> {
    let (types, locations) = check_facts(module, info)?;
    emit::program(module, &types, info, &locations, parallel)
}

#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod tests;
