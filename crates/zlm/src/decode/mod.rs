//! The independent decoder and structural validator.
//!
//! Nothing in the input is trusted: section starts are derived from the
//! header counts with checked arithmetic and must end exactly at the input
//! length before any table is read or allocated; every reference and range
//! is resolved against its table and owner; the logical projection is
//! reconstructed; every identity is recomputed; and the bytes must equal the
//! canonical encoding of that projection, which rejects noncanonical order,
//! orphan records and pool entries, wrong derived fields and reserved bits.

mod project;
mod reader;

use crate::error::{Error, Result, code};
use crate::hash::Id;
use crate::ids;
use crate::layout::{HEADER_BYTES, Section, header, locate};
use crate::model::*;
use project::project;
use reader::{Reader, sections};

pub use crate::check::Checked;
pub use project::PARALLEL_MIN_OPS;

/// Wall-clock time of each decoding phase (see [`decode_profiled`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Phases {
    /// Header, section derivation and the checked projection to a model.
    pub structural: std::time::Duration,
    /// Recomputing every logical identity (ids::compute).
    pub identities: std::time::Duration,
    /// Model validation: admitted kinds, per-tag shapes, typing, CFG (validate::check).
    pub model: std::time::Duration,
    /// In-place comparison with the canonical encoding (order, carried IDs, pools).
    pub canonical: std::time::Duration,
    /// The semantic check (zlm::check): ownership, loans, contracts.
    pub semantic: std::time::Duration,
    /// With two threads: the identity work done on the calling thread
    /// (hashing the body constants, encoding its share of the largest body's
    /// operations) before its model, canonical and semantic phases; zero
    /// with one thread.
    pub shared: std::time::Duration,
    /// Threads used (1 or 2).
    pub threads: usize,
}

/// How many threads [`decode_with`] may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Every phase on the calling thread.
    One,
    /// Two threads: the function bodies are hashed on a second thread while
    /// the calling thread validates the model, compares the canonical
    /// encoding and runs the semantic check. Results and errors are the
    /// same as with [`Threads::One`].
    Two,
    /// [`Threads::Two`] when the machine has at least two cores and the
    /// module has at least [`PARALLEL_MIN_OPS`] body operations.
    Auto,
}

/// Decodes and fully validates untrusted bytes. Imports are not resolved
/// (no providers are given): the result can be printed and inspected, and
/// [`crate::interp::Interp::new`] refuses it when it imports anything.
pub fn decode(bytes: &[u8]) -> Result<Checked> {
    decode_with(bytes, Threads::Auto).map(|(checked, _)| checked)
}

/// [`decode`] that also resolves every import against `providers` (see
/// [`check_imports`]) right after the projection, so a missing provider or
/// a stale interface digest rejects before the dependent module is checked.
pub fn decode_linked(bytes: &[u8], providers: &[&Checked]) -> Result<Checked> {
    decode_full(bytes, Threads::Auto, Some(providers)).map(|(checked, _)| checked)
}

/// [`decode`], also reporting how long each phase took.
pub fn decode_profiled(bytes: &[u8]) -> Result<(Checked, Phases)> {
    decode_with(bytes, Threads::Auto)
}

/// Writes the canonical bytes of a model and decodes them: the only way
/// from a model built in code or parsed from text to a [`Checked`] module.
pub fn from_model(module: &Module, providers: &[&Checked]) -> Result<Checked> {
    let bytes = crate::write::write(module)?;
    decode_linked(&bytes, providers)
}

/// [`decode`] on the given threads, reporting how long each phase took
/// (with two threads, `identities` is waves 1-11 plus the body thread's own
/// time, overlapped with `shared`, `model`, `canonical` and `semantic` on
/// the calling thread).
pub fn decode_with(bytes: &[u8], threads: Threads) -> Result<(Checked, Phases)> {
    decode_full(bytes, threads, None)
}

fn decode_full(
    bytes: &[u8],
    threads: Threads,
    providers: Option<&[&Checked]>,
) -> Result<(Checked, Phases)> {
    use std::time::Instant;
    let start = Instant::now();
    // Ancillary data after the payload is not the payload's: read alone by
    // `crate::ancillary`, never here.
    let (bytes, _) = crate::ancillary::container::split(bytes);
    let located = sections(bytes)?;
    let two = match threads {
        Threads::One => false,
        Threads::Two => true,
        Threads::Auto => {
            located.count(Section::Ops) >= PARALLEL_MIN_OPS
                && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
        }
    };
    let module = project(&located, two)?;
    // The providers of the modules this one imports from (its direct
    // dependencies), and the other supplied modules.
    let mut direct: Vec<(&Module, &ids::Identities)> = Vec::new();
    let mut others: Vec<(&Module, &ids::Identities)> = Vec::new();
    let mut links: Vec<(String, Id)> = Vec::new();
    if let Some(providers) = providers {
        let pairs: Vec<(&Module, &ids::Identities)> = providers
            .iter()
            .map(|provider| (provider.module(), provider.ids()))
            .collect();
        resolve_imports(&module, &pairs)?;
        for provider in providers {
            let provider_module = provider.module();
            let imported = provider_module.package == module.package
                && module
                    .imports
                    .iter()
                    .any(|i| i.module == provider_module.name)
                && !direct.iter().any(|(d, _)| d.name == provider_module.name);
            if imported {
                direct.push((provider_module, provider.ids()));
                links.push((provider_module.name.clone(), provider.module_content()));
            } else {
                others.push((provider_module, provider.ids()));
            }
        }
        links.sort();
    }
    let linked = providers.map(|_| (direct.as_slice(), others.as_slice()));
    let semantic = |module: &Module, ids: &ids::Identities| match linked {
        Some((direct, others)) => crate::check::check_linked_foreign(module, ids, direct, others),
        None => crate::check::check_with_ids_foreign(module, ids),
    };
    let structural_done = Instant::now();
    let mut carried = [0u8; 32];
    carried.copy_from_slice(&bytes[header::CONTENT..header::CONTENT + 32]);
    let mut phases = Phases {
        structural: structural_done - start,
        ..Phases::default()
    };
    // `foreign`: some function names a symbol of another module (answered
    // by the semantic check's symbol walk, not a second one).
    let (ids, foreign) = if !two {
        let mut pending = ids::prepare(&module, false)?;
        pending
            .hasher
            .reserve_constants(located.count(Section::Constants) as usize);
        let (ids, _) = pending.finish(&module, None)?;
        let identities_done = Instant::now();
        model_phase(&module, &ids, &located)?;
        let model_done = Instant::now();
        let (mismatch, ids) =
            crate::write::compare_canonical(&module, ids, bytes, &located.starts)?;
        if let Some(at) = mismatch {
            return Err(mismatch_error(&located, at));
        }
        let canonical_done = Instant::now();
        // Checked semantics (issue 10): rerun by every decode, never trusted. The
        // identities are the ones recomputed above from the projection (and
        // matched against every carried ID), not the input's.
        let foreign = semantic(&module, &ids)?;
        let semantic_done = Instant::now();
        phases.identities = identities_done - structural_done;
        phases.model = model_done - identities_done;
        phases.canonical = canonical_done - model_done;
        phases.semantic = semantic_done - canonical_done;
        phases.threads = 1;
        (ids, foreign)
    } else {
        let checked = two_threads(&module, &located, bytes, carried, &mut phases, &semantic)?;
        phases.threads = 2;
        checked
    };
    Ok((
        Checked::new(module, ids, carried, providers.is_some(), links, foreign),
        phases,
    ))
}

/// Model validation (admitted kinds, per-tag shapes, typing, CFG).
fn model_phase(module: &Module, ids: &ids::Identities, located: &Reader) -> Result<()> {
    crate::validate::check(module, ids).map_err(|mut error| {
        // Point a layout cycle at the declaration record (projected in
        // physical order, so the model index is the record index).
        if error.code == code::LAYOUT
            && error.offset.is_none()
            && let Some((decl_index, _)) = crate::validate::layout_cycle(module, ids)
        {
            error.offset = Some(located.start(Section::Decls) + 80 * decl_index as u64);
        }
        error
    })
}

/// The error for the first byte `at` that differs from the canonical encoding.
fn mismatch_error(located: &Reader, at: u64) -> Error {
    let place = locate(&located.starts, at);
    let is_id = at >= header::CATALOG as u64 && at < (header::CONTENT + 32) as u64
        || located.starts.iter().any(|&(section, start, len)| {
            at >= start && at < start + len && {
                let rel = (at - start) % section.record_size();
                section
                    .id_fields()
                    .iter()
                    .any(|&(a, b)| rel >= a && rel < b)
            }
        });
    let (error_code, what) = if at >= header::CATALOG as u64 && at < (header::CATALOG + 32) as u64 {
        (
            code::CATALOG,
            "the catalog content identity is not that of zerglang.selfhost-intrinsics/1",
        )
    } else if is_id {
        (
            code::ID,
            "a carried identity differs from the recomputed one",
        )
    } else {
        (
            code::NONCANONICAL,
            "bytes differ from the canonical encoding of their logical projection",
        )
    };
    Error::at(error_code, at, format!("{what} ({place})"))
}

/// The share of the largest body's operations (the last ones) that the
/// calling thread encodes for the body thread, balancing the two threads'
/// work. Measured on the benchmark module with both cores idle: 0 gives
/// 143 ms, 1/4 137 ms, 3/8 135 ms, 7/16 134 ms, 1/2 138 ms (the calling
/// thread then takes longest); 3/8 keeps the transient encoding smaller
/// at the same speed (≈ 700 bytes per shared operation of that module,
/// 42 MB, 3.3x its artifact).
const SHARED_NUM: usize = 3;
const SHARED_DEN: usize = 8;

/// How the calling thread's phases ended in [`two_threads`].
enum MainOutcome {
    Model(Error),
    Canonical(Error),
    Mismatch(u64),
    Semantic(Error),
    /// The identities and whether some function names a foreign symbol.
    Valid(Box<ids::Identities>, bool),
}

/// The two-thread schedule. Waves 1-11 of the identities come first; then
/// a second thread hashes every function body, while this thread runs
/// model validation, the canonical comparison (the carried module content
/// stands in for the recomputed one, which needs the bodies) and the
/// semantic check. The reported error is the one the sequential order reports: an
/// identity error first, then model validation, then the first canonical
/// mismatch (including the module content, now known), then the semantic
/// check.
fn two_threads(
    module: &Module,
    located: &Reader,
    bytes: &[u8],
    carried: Id,
    phases: &mut Phases,
    semantic: &(dyn Fn(&Module, &ids::Identities) -> crate::check::CResult<bool> + Sync),
) -> Result<(ids::Identities, bool)> {
    use std::time::Instant;
    let started = Instant::now();
    let mut pending = ids::prepare(module, false)?;
    let provisional = pending.provisional(carried);
    let mut hasher = std::mem::replace(&mut pending.hasher, ids::Hasher::new(false));
    hasher.reserve_constants(located.count(Section::Constants) as usize);
    let t_prepared = Instant::now();
    // The calling thread hashes the body constants first (its canonical
    // comparison needs them) and hands a copy to the body thread, which
    // reaches the operations, where constants appear, only after the block
    // part of the body preimage.
    let (constants_tx, constants_rx) = std::sync::mpsc::sync_channel(1);
    hasher.receive_constants(constants_rx);
    // The largest body's operations are shared too: this thread encodes the
    // last 3/8 (before its own phases) while the body thread encodes and
    // hashes the rest, then hashes that encoding in its place.
    let share = ids::Pending::largest_body(module)
        .filter(|&(_, n)| n as u64 >= PARALLEL_MIN_OPS)
        .map(|(at, n)| (at, n - n * SHARED_NUM / SHARED_DEN));
    let (tail_tx, tail_rx) = std::sync::mpsc::sync_channel::<Result<Vec<u8>>>(1);
    let pending_ref = &pending;
    let hasher_ref = &mut hasher;
    let (body, main, times) = std::thread::scope(|scope| {
        // Without a thread (the OS refused one), the bodies are hashed after
        // the other phases, on this thread.
        let worker = std::thread::Builder::new()
            .spawn_scoped(scope, move || {
                let body_start = Instant::now();
                let bodies = match share {
                    Some((at, first_tail_op)) => {
                        let mut tail = || {
                            tail_rx.recv().unwrap_or_else(|_| {
                                Err(Error::new(
                                    code::MODEL,
                                    "internal error: the shared body operations were not encoded",
                                ))
                            })
                        };
                        pending_ref.bodies_sharing(hasher_ref, module, at, first_tail_op, &mut tail)
                    }
                    None => pending_ref.bodies(hasher_ref, module),
                };
                (bodies, body_start.elapsed())
            })
            .ok();
        let mut ids = provisional;
        let t_shared = Instant::now();
        let mut constants = ids::Hasher::new(false);
        constants.hash_body_constants(module);
        let _ = constants_tx.send(constants.constant_ids().clone());
        if let Some((at, first_tail_op)) = share
            && worker.is_some()
        {
            let _ = tail_tx.send(pending_ref.body_tail(&mut constants, module, at, first_tail_op));
        }
        // The canonical writer needs the body constants too (hashed here;
        // it hashes any still missing itself).
        let mut body_constants = constants.take_constant_ids();
        for (constant, id) in std::mem::take(&mut ids.constants) {
            body_constants.entry(constant).or_insert(id);
        }
        ids.constants = body_constants;
        let shared_done = Instant::now();
        let mut times = [std::time::Duration::ZERO; 4];
        times[3] = shared_done - t_shared;
        let main = 'main: {
            if let Err(error) = model_phase(module, &ids, located) {
                break 'main MainOutcome::Model(error);
            }
            let model_done = Instant::now();
            times[0] = model_done - shared_done;
            let ids = match crate::write::compare_canonical(module, ids, bytes, &located.starts) {
                Err(error) => break 'main MainOutcome::Canonical(error),
                Ok((Some(at), _)) => break 'main MainOutcome::Mismatch(at),
                Ok((None, ids)) => ids,
            };
            let canonical_done = Instant::now();
            times[1] = canonical_done - model_done;
            let checked = semantic(module, &ids);
            times[2] = canonical_done.elapsed();
            match checked {
                Err(error) => MainOutcome::Semantic(error.into()),
                Ok(foreign) => MainOutcome::Valid(Box::new(ids), foreign),
            }
        };
        let body = worker.map(|handle| match handle.join() {
            Ok(outcome) => outcome,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        (body, main, times)
    });
    let (bodies, body_time) = body.unwrap_or_else(|| {
        let bodies_start = Instant::now();
        (pending.bodies(&mut hasher, module), bodies_start.elapsed())
    });
    phases.identities = (t_prepared - started) + body_time;
    phases.shared = times[3];
    phases.model = times[0];
    phases.canonical = times[1];
    phases.semantic = times[2];
    let bodies = bodies?;
    let (finished, _) = pending.finish(module, Some(&bodies))?;
    let content = finished
        .module_content
        .iter()
        .zip(&carried)
        .position(|(a, b)| a != b)
        .map(|i| (header::CONTENT + i) as u64);
    match main {
        MainOutcome::Model(error) | MainOutcome::Canonical(error) => Err(error),
        MainOutcome::Mismatch(at) => {
            // A header mismatch precedes every section mismatch.
            let at = match content {
                Some(content_at) if at >= HEADER_BYTES as u64 || content_at < at => content_at,
                _ => at,
            };
            Err(mismatch_error(located, at))
        }
        MainOutcome::Semantic(error) => {
            Err(content.map_or(error, |content_at| mismatch_error(located, content_at)))
        }
        MainOutcome::Valid(main_ids, foreign) => match content {
            Some(content_at) => Err(mismatch_error(located, content_at)),
            // The calling thread's identities carry the module content that
            // the finished ones just confirmed.
            None => Ok((*main_ids, foreign)),
        },
    }
}

/// Resolves every import of `module` against its provider modules: the
/// provider must be supplied (same package, dotted name equal to the
/// import's module), export a public declaration of that name and kind with
/// the same Copy flag, and have exactly the carried module-interface digest.
pub fn check_imports(module: &Module, providers: &[Module]) -> Result<()> {
    let mut pairs = Vec::with_capacity(providers.len());
    for provider in providers {
        pairs.push((provider, ids::compute(provider, false)?.0));
    }
    let pairs: Vec<(&Module, &ids::Identities)> = pairs.iter().map(|(m, i)| (*m, i)).collect();
    resolve_imports(module, &pairs)
}

/// [`check_imports`] against providers whose identities are known.
fn resolve_imports(module: &Module, providers: &[(&Module, &ids::Identities)]) -> Result<()> {
    for imp in &module.imports {
        let (provider, pids) = providers
            .iter()
            .find(|(provider, _)| provider.package == module.package && provider.name == imp.module)
            .ok_or_else(|| {
                Error::new(
                    code::IMPORT,
                    format!(
                        "import {}.{}: provider module {} was not supplied",
                        imp.module, imp.name, imp.module
                    ),
                )
            })?;
        if pids.module_interface != imp.interface {
            return Err(Error::new(
                code::IMPORT,
                format!(
                    "import {}.{}: stale module-interface digest (provider has {})",
                    imp.module,
                    imp.name,
                    crate::hash::to_hex(&pids.module_interface)
                ),
            ));
        }
        let found = provider
            .declarations
            .iter()
            .zip(&pids.decls)
            .find(|(decl, _)| decl.name == imp.name && decl.kind == imp.kind);
        match found {
            Some((decl, decl_ids)) if decl.visibility == Visibility::Public => {
                if decl_ids.copy != imp.copy {
                    return Err(Error::new(
                        code::IMPORT,
                        format!(
                            "import {}.{}: Copy flag differs from the provider",
                            imp.module, imp.name
                        ),
                    ));
                }
            }
            _ => {
                return Err(Error::new(
                    code::IMPORT,
                    format!(
                        "import {}.{}: the provider exports no public {} declaration of that name",
                        imp.module,
                        imp.name,
                        imp.kind.text()
                    ),
                ));
            }
        }
    }
    Ok(())
}
