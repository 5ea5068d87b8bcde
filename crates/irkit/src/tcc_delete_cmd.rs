//! `irkit tcc delete ID` (issue 35, `tcc_host::retention`): deletes one
//! terminal execution on a server with its journal, history and
//! checkpoints (`DELETE /v1/executions/ID`); an unfinished one is refused
//! (`TCC-H204` `conflict`, exit 1).

use crate::args::FormatArgs;
use crate::diag::Format;
use crate::error::{CliError, Outcome};
use crate::tcc_host_cmd::{Client, ClientArgs, print_json};
use tcc_host::service::percent_encode;

/// `irkit tcc delete`.
#[derive(clap::Args)]
pub struct DeleteArgs {
    /// Execution id (a completed, failed or cancelled one).
    id: String,
    // `ID deleted` (human) or the answer JSON.
    #[command(flatten)]
    pub(crate) fmt: FormatArgs,
    #[command(flatten)]
    client: ClientArgs,
}

/// `irkit tcc delete`.
pub fn delete(a: DeleteArgs) -> Result<Outcome, CliError> {
    let j = Client::new(&a.client).call(
        "DELETE",
        &format!("/v1/executions/{}", percent_encode(&a.id)),
        None,
    )?;
    match a.fmt.format {
        Format::Human => println!("{} deleted", a.id),
        Format::Json => print_json(&j),
    }
    Ok(Outcome::Success)
}
