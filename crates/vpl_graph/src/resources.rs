//! What the generated module declares: the nodes each output reaches, the
//! sub-graphs called, uniforms (with textures' sampler state), varyings
//! and fragment outputs, with their name conflicts as graph errors.

use crate::check::{Checked, Graph};
use crate::error::{ErrorKind, GraphError};
use crate::nodes::{Kind, SamplerState, Varying};
use crate::types::Ty;
use std::collections::{BTreeMap, BTreeSet};

/// The declared resources of a document.
#[derive(Debug, Clone)]
pub struct Resources {
    /// Reachable nodes of the main graph.
    pub main_live: Vec<bool>,
    /// Sub-graphs called (transitively) from the live main graph, in file
    /// order, with their live nodes.
    pub functions: Vec<(usize, Vec<bool>)>,
    /// Uniforms by name (sorted): type and, for textures, sampler state.
    pub uniforms: BTreeMap<String, (Ty, Option<SamplerState>)>,
    /// Varyings read by live nodes.
    pub varyings: BTreeSet<Varying>,
    /// The material output node.
    pub material: usize,
    /// Fragment output nodes (main graph indices), in id order.
    pub outputs: Vec<usize>,
}

/// The name of the `time` uniform.
pub const TIME: &str = "time";
/// The entry function's display name.
pub const FRAGMENT_MAIN: &str = "fragment_main";
/// The primary output's interface name.
pub const BASE_COLOR: &str = "base_color";

/// Nodes from which `roots` are reachable (following edges backwards).
fn live(g: &Graph, roots: impl Iterator<Item = usize>) -> Vec<bool> {
    let mut live = vec![false; g.nodes.len()];
    let mut stack: Vec<usize> = roots.collect();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut live[n], true) {
            continue;
        }
        stack.extend(g.nodes[n].sources.iter().flatten().map(|s| s.node));
    }
    live
}

/// Collects the resources of `doc`; every conflict is returned.
pub fn collect(doc: &Checked) -> Result<Resources, Vec<GraphError>> {
    let mut errors = Vec::new();
    let main = &doc.main;
    let materials: Vec<usize> = (0..main.nodes.len())
        .filter(|i| main.nodes[*i].kind == Kind::MaterialOutput)
        .collect();
    if materials.len() != 1 {
        let e = GraphError::new(
            ErrorKind::Output,
            format!(
                "the material graph needs exactly one `material_output` node, not {}",
                materials.len()
            ),
        );
        errors.push(match materials.get(1) {
            Some(n) => e.at_node(&main.nodes[*n].id),
            None => e,
        });
    }
    // Fragment outputs: names and locations unique, not clashing with the interface's own.
    let mut outputs: Vec<usize> = (0..main.nodes.len())
        .filter(|i| matches!(main.nodes[*i].kind, Kind::FragmentOutput { .. }))
        .collect();
    outputs.sort_by(|a, b| main.nodes[*a].id.cmp(&main.nodes[*b].id));
    let mut names = BTreeSet::new();
    let mut locations = BTreeSet::new();
    for &o in &outputs {
        if let Kind::FragmentOutput { name, location, .. } = &main.nodes[o].kind {
            let reserved = name == BASE_COLOR || Varying::ALL.iter().any(|v| v.name() == name);
            if reserved || !names.insert(name.clone()) {
                errors.push(
                    GraphError::new(
                        ErrorKind::Output,
                        format!("output name {name:?} is reserved or used twice"),
                    )
                    .at_node(&main.nodes[o].id),
                );
            }
            if *location >= 0 && !locations.insert(*location) {
                errors.push(
                    GraphError::new(
                        ErrorKind::Output,
                        format!("output location {location} is used twice"),
                    )
                    .at_node(&main.nodes[o].id),
                );
            }
        }
    }
    // Sub-graphs: exactly one return each; no name clash with the entry.
    for (fi, g) in doc.functions.iter().enumerate() {
        let name = doc.signatures[fi].name.as_str();
        let returns = g.nodes.iter().filter(|n| n.kind == Kind::Return).count();
        if returns != 1 {
            errors.push(
                GraphError::new(
                    ErrorKind::Output,
                    format!("a sub-graph needs exactly one `return` node, not {returns}"),
                )
                .in_function(Some(name)),
            );
        }
        if name == FRAGMENT_MAIN {
            errors.push(
                GraphError::new(
                    ErrorKind::Name,
                    format!("{FRAGMENT_MAIN:?} is the entry function's name"),
                )
                .in_function(Some(name)),
            );
        }
    }
    // Uniforms over every node (also unused ones, so an edit never hides a conflict).
    let mut uniforms: BTreeMap<String, (Ty, Option<SamplerState>, String)> = BTreeMap::new();
    let graphs = std::iter::once((None, main))
        .chain(doc.functions.iter().enumerate().map(|(i, g)| (Some(i), g)));
    for (fi, g) in graphs {
        let fname = fi.map(|i| doc.signatures[i].name.as_str());
        for n in &g.nodes {
            let (name, ty, state) = match &n.kind {
                Kind::Time => (TIME.to_string(), Ty::FLOAT, None),
                Kind::Uniform { name, ty } => (name.clone(), ty.clone(), None),
                Kind::TextureSample { texture, state } => {
                    (texture.clone(), Ty::Sampler, Some(*state))
                }
                _ => continue,
            };
            match uniforms.get(&name) {
                None => {
                    uniforms.insert(name, (ty, state, n.id.clone()));
                }
                Some((t, s, first)) => {
                    let show = |t: &Ty| t.display(&doc.records).to_string();
                    if *t != ty {
                        errors.push(
                            GraphError::new(
                                ErrorKind::Name,
                                format!(
                                    "uniform {name:?} is {} here but {} at node {first}",
                                    show(&ty),
                                    show(t)
                                ),
                            )
                            .at_node(&n.id)
                            .in_function(fname),
                        );
                    } else if *s != state {
                        errors.push(
                            GraphError::new(
                                ErrorKind::Name,
                                format!("texture {name:?} has another sampler state at node {first} (one texture, one state)"),
                            )
                            .at_node(&n.id)
                            .in_function(fname),
                        );
                    }
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let roots: Vec<usize> = materials.iter().chain(&outputs).copied().collect();
    let main_live = live(main, roots.into_iter());
    // Sub-graphs reached from live call nodes, transitively.
    let mut called = BTreeSet::new();
    let mut pending: Vec<(usize, Vec<bool>)> = Vec::new();
    let mut functions_live: BTreeMap<usize, Vec<bool>> = BTreeMap::new();
    let calls_of = |g: &Graph, live: &[bool]| -> Vec<usize> {
        g.nodes
            .iter()
            .zip(live)
            .filter(|(_, l)| **l)
            .filter_map(|(n, _)| match &n.kind {
                Kind::Call { function } => doc.signatures.iter().position(|s| s.name == *function),
                _ => None,
            })
            .collect()
    };
    let mut queue = calls_of(main, &main_live);
    while let Some(f) = queue.pop() {
        if !called.insert(f) {
            continue;
        }
        let g = &doc.functions[f];
        let ret = (0..g.nodes.len()).filter(|i| g.nodes[*i].kind == Kind::Return);
        let l = live(g, ret);
        queue.extend(calls_of(g, &l));
        pending.push((f, l));
    }
    for (f, l) in pending {
        functions_live.insert(f, l);
    }
    // Resources used by live nodes.
    let mut used_uniforms = BTreeMap::new();
    let mut varyings = BTreeSet::new();
    let all_live = std::iter::once((main, &main_live))
        .chain(functions_live.iter().map(|(f, l)| (&doc.functions[*f], l)));
    for (g, l) in all_live {
        for (n, _) in g.nodes.iter().zip(l.iter()).filter(|(_, l)| **l) {
            let name = match &n.kind {
                Kind::Time => TIME,
                Kind::Uniform { name, .. } => name.as_str(),
                Kind::TextureSample { texture, .. } => texture.as_str(),
                Kind::Input(v) => {
                    varyings.insert(*v);
                    continue;
                }
                _ => continue,
            };
            if let Some((t, s, _)) = uniforms.get(name) {
                used_uniforms.insert(name.to_string(), (t.clone(), *s));
            }
        }
    }
    Ok(Resources {
        main_live,
        functions: functions_live.into_iter().collect(),
        uniforms: used_uniforms,
        varyings,
        material: materials.first().copied().unwrap_or(0),
        outputs,
    })
}
