//! The heading both printers put above a lowered unit: which modules it
//! was lowered from, with their profiles and content identities, so that
//! an emitted file names the artifact it came from.

use crate::check::Checked;
use crate::model::Module;

/// The heading's lines, without comment markers: the lowered module `m`'s
/// name, package and profile with `tool` (what made the file), the content
/// identity of `modules[0]` (the checked form of `m`), then one line per
/// provider module (the rest of `modules`). Every name goes through
/// `escape`, which makes it safe inside the printer's comment syntax.
pub fn heading_lines(
    m: &Module,
    modules: &[Checked],
    tool: &str,
    escape: fn(&str) -> String,
) -> Vec<String> {
    let Some((root, providers)) = modules.split_first() else {
        return Vec::new();
    };
    let mut lines = vec![
        format!(
            "Module {} (package {}), profile {}: {tool}.",
            escape(&m.name),
            escape(&m.package),
            m.profile.text()
        ),
        format!(
            "Content identity {}.",
            crate::hash::to_hex(&root.module_content())
        ),
    ];
    lines.extend(providers.iter().map(|p| {
        format!(
            "Provider {}, profile {}, content identity {}.",
            escape(&p.module().name),
            p.module().profile.text(),
            crate::hash::to_hex(&p.module_content())
        )
    }));
    lines
}
