//! `irkit vpl playground`: serves the VPL playground page (embedded in
//! `vpl_web`) until the process is stopped.

use crate::error::{CliError, Outcome};
use std::net::SocketAddr;

/// Arguments of `irkit vpl playground`.
#[derive(clap::Args)]
pub struct PlaygroundArgs {
    /// Address to listen on: IP:PORT or HOST:PORT (`localhost:0`); port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:7878", value_parser = crate::args::parse_listen)]
    pub listen: SocketAddr,
}

/// `irkit vpl playground`.
pub fn playground(args: PlaygroundArgs) -> Result<Outcome, CliError> {
    let server = vpl_web::Server::start(args.listen)
        .map_err(|e| CliError::usage(format!("cannot listen on {}: {e}", args.listen)))?;
    if !server.addr().ip().is_loopback() {
        eprintln!(
            "warning: the playground has no authentication; anyone who reaches {} can use it",
            server.addr()
        );
    }
    // Tests and scripts read the address from this first line.
    println!("VPL playground: {}", server.url("/"));
    server.wait().map_err(|e| CliError::usage(e.to_string()))?;
    Ok(Outcome::Success)
}
