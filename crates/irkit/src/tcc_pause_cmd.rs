//! `irkit tcc pause ID | --program NAME` and `irkit tcc resume --program
//! NAME` (issue 35, `tcc_host::pause`): an operator holds one execution or
//! every execution of a program on a server; nothing new of it runs until
//! it is resumed (`irkit tcc resume ID` lifts an execution's pause).

use crate::args::FormatArgs;
use crate::diag::Format;
use crate::error::{CliError, Outcome};
use crate::tcc_host_cmd::{Client, ClientArgs, print_json};
use tcc_host::service::percent_encode;

/// `irkit tcc pause`.
#[derive(clap::Args)]
pub struct PauseArgs {
    /// Execution id (an unfinished one).
    #[arg(required_unless_present = "program", conflicts_with = "program")]
    id: Option<String>,
    /// Pause every execution of this program name instead, those started
    /// later included.
    #[arg(long)]
    program: Option<String>,
    // `ID paused` (human) or the answer JSON.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

fn show(j: &serde_json::Value, line: String, format: Format) {
    match format {
        Format::Human => println!("{line}"),
        Format::Json => print_json(j),
    }
}

/// `irkit tcc pause`: `POST /v1/executions/ID/pause` or `POST
/// /v1/programs/NAME/pause`.
pub fn pause(a: PauseArgs) -> Result<Outcome, CliError> {
    let client = Client::new(&a.client);
    match (&a.program, &a.id) {
        (Some(name), _) => program(&client, name, true, a.fmt.format),
        (None, Some(id)) => {
            let j = client.call(
                "POST",
                &format!("/v1/executions/{}/pause", percent_encode(id)),
                None,
            )?;
            let already = if j["changed"] == false {
                " (already)"
            } else {
                ""
            };
            show(&j, format!("{id} paused{already}"), a.fmt.format);
            Ok(Outcome::Success)
        }
        (None, None) => Err(crate::tcc_host_cmd::usage(
            "give an execution id or --program NAME",
        )),
    }
}

/// Pauses or resumes program `name` on the server.
pub(crate) fn program(
    client: &Client,
    name: &str,
    paused: bool,
    format: Format,
) -> Result<Outcome, CliError> {
    let verb = if paused { "pause" } else { "resume" };
    let j = client.call(
        "POST",
        &format!("/v1/programs/{}/{verb}", percent_encode(name)),
        None,
    )?;
    let done = if paused { "paused" } else { "resumed" };
    let already = if j["changed"] == false {
        " (already)"
    } else {
        ""
    };
    show(&j, format!("program {name} {done}{already}"), format);
    Ok(Outcome::Success)
}
