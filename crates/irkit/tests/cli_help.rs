//! Every `--help` of irkit runs, and the verbs it lists are the verbs README's command list
//! documents, both ways: a verb that exists is documented, a documented verb exists.

mod common;
use common::{help_commands, irkit, repo_file, text};
use std::collections::BTreeSet;

/// Runs `irkit ARGS --help` and returns its text, failing unless it exits 0.
fn help(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("--help");
    let out = irkit(&all);
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Usage: irkit"), "{all:?}: {stdout}");
    stdout
}

#[test]
fn every_help_runs_and_every_verb_is_in_the_readme() {
    let systems = help_commands(&help(&[]));
    assert_eq!(systems, ["vpl", "tcc", "rvn", "zlm"]);
    let mut verbs = BTreeSet::new();
    for system in &systems {
        let listed = help_commands(&help(&[system]));
        assert!(!listed.is_empty(), "{system}");
        for verb in listed {
            let text = help(&[system, &verb]);
            assert!(
                text.contains(&format!("Usage: irkit {system} {verb}")),
                "{system} {verb}: {text}"
            );
            verbs.insert(format!("{system} {verb}"));
        }
    }
    let readme = std::fs::read_to_string(repo_file("README.md")).unwrap();
    let commands_section = readme
        .split("\n## Commands\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README has a Commands section");
    let documented: BTreeSet<String> = commands_section
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("irkit "))
        .filter_map(|rest| {
            let mut words = rest.split_whitespace();
            let system = words.next()?;
            // `register|start|status|...` lines name several verbs at once.
            let verbs = words.next()?;
            Some(
                verbs
                    .split('|')
                    .map(|v| format!("{system} {v}"))
                    .collect::<Vec<_>>(),
            )
        })
        .flatten()
        .filter(|v| !v.ends_with(" ..."))
        .collect();
    let undocumented: Vec<_> = verbs.difference(&documented).collect();
    let missing: Vec<_> = documented.difference(&verbs).collect();
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "verbs without a README line: {undocumented:?}; README lines naming no verb: {missing:?}"
    );
}
