//! Packages of modules: a root module and the providers it (and they) link
//! against, each a [`Checked`] module, as one executable unit. A package is
//! built only from checked modules whose cross-module symbols were checked
//! against exactly the providers the package holds (`ZLM-PACKAGE`
//! otherwise), so the interpreter and the C engine run calls across its
//! modules without checking anything again.

use crate::check::{LinkedView, Resolved};
use crate::decode::{Checked, decode, decode_linked};
use crate::error::{Error, Result, code};

/// A root module and every provider reachable from it through the
/// providers each module was checked against.
#[derive(Debug, Clone)]
pub struct Package {
    /// The root first, then the providers sorted by module name.
    modules: Vec<Checked>,
    view: LinkedView,
}

impl Package {
    /// Builds the package of `root`. Every module in it (the root, then
    /// each provider it needs) must have been decoded with its providers
    /// (`decode_linked`), and each provider it was checked against must be
    /// among `providers` with that exact module-content identity. Providers
    /// no module needs are left out.
    pub fn new(root: Checked, providers: Vec<Checked>) -> Result<Package> {
        let mut pool: Vec<Option<Checked>> = providers.into_iter().map(Some).collect();
        let mut modules = vec![root];
        let mut next = 0;
        while next < modules.len() {
            let (name, needs) = {
                let m = &modules[next];
                if !m.imports_resolved() {
                    return Err(Error::new(
                        code::PACKAGE,
                        format!(
                            "module {} was decoded without its providers: its imports are not resolved",
                            m.module().name
                        ),
                    ));
                }
                (m.module().name.clone(), m.links().to_vec())
            };
            for (dep, content) in needs {
                if modules
                    .iter()
                    .any(|m| m.module().name == dep && m.module_content() == content)
                {
                    continue;
                }
                if modules.iter().any(|m| m.module().name == dep) {
                    return Err(Error::new(
                        code::PACKAGE,
                        format!(
                            "module {name} was checked against another version of {dep} than the package holds"
                        ),
                    ));
                }
                let found = pool.iter().position(|p| {
                    p.as_ref()
                        .is_some_and(|p| p.module().name == dep && p.module_content() == content)
                });
                match found.and_then(|i| pool[i].take()) {
                    Some(p) => modules.push(p),
                    None => {
                        let other = pool.iter().flatten().any(|p| p.module().name == dep);
                        return Err(Error::new(
                            code::PACKAGE,
                            if other {
                                format!(
                                    "provider {dep} is not the module {name} was checked against (its module-content identity differs)"
                                )
                            } else {
                                format!("provider {dep}, which {name} links against, is missing")
                            },
                        ));
                    }
                }
            }
            next += 1;
        }
        modules[1..].sort_by(|a, b| a.module().name.cmp(&b.module().name));
        let parts: Vec<_> = modules[1..].iter().map(|m| (m.module(), m.ids())).collect();
        let view = LinkedView::new((modules[0].module(), modules[0].ids()), &parts);
        Ok(Package { modules, view })
    }

    /// The root module.
    pub fn root(&self) -> &Checked {
        &self.modules[0]
    }

    /// Every module: the root, then the providers sorted by module name.
    pub fn modules(&self) -> &[Checked] {
        &self.modules
    }

    /// Resolution tables over every module of the package: the root's
    /// declarations are `0..local`, each provider's follow in module order.
    pub fn resolved(&self) -> Resolved<'_> {
        self.view.resolved()
    }
}

/// Decodes provider artifacts that may import from each other: each is
/// decoded on its own first, then again with the already linked providers
/// of the modules it imports from, in dependency order, so that every one
/// whose providers are all present ends up linked. A failure names the
/// index of the artifact it concerns.
pub fn decode_providers(artifacts: &[&[u8]]) -> std::result::Result<Vec<Checked>, (usize, Error)> {
    let mut out: Vec<Option<Checked>> = Vec::with_capacity(artifacts.len());
    for (i, bytes) in artifacts.iter().enumerate() {
        out.push(Some(decode(bytes).map_err(|e| (i, e))?));
    }
    let mut linked = vec![false; artifacts.len()];
    for (i, c) in out.iter().enumerate() {
        linked[i] = c.as_ref().is_some_and(|c| c.module().imports.is_empty());
    }
    loop {
        let mut progressed = false;
        for i in 0..artifacts.len() {
            if linked[i] {
                continue;
            }
            let Some(me) = out[i].as_ref() else { continue };
            let ready = me.module().imports.iter().all(|imp| {
                out.iter()
                    .zip(&linked)
                    .any(|(c, l)| *l && c.as_ref().is_some_and(|c| c.module().name == imp.module))
            });
            if !ready {
                continue;
            }
            let providers: Vec<&Checked> = out
                .iter()
                .zip(&linked)
                .filter(|(_, l)| **l)
                .filter_map(|(c, _)| c.as_ref())
                .collect();
            let again = decode_linked(artifacts[i], &providers).map_err(|e| (i, e))?;
            out[i] = Some(again);
            linked[i] = true;
            progressed = true;
        }
        if !progressed {
            break;
        }
    }
    Ok(out.into_iter().flatten().collect())
}
