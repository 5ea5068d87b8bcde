//! `irkit vpl playground`: serves the VPL playground page (embedded in
//! `vpl_web`) until the process is stopped.

use crate::EXIT_USAGE;
use std::net::SocketAddr;
use std::process::ExitCode;

/// Arguments of `irkit vpl playground`.
#[derive(clap::Args)]
pub struct PlaygroundArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub listen: SocketAddr,
}

/// `irkit vpl playground`.
pub fn playground(args: PlaygroundArgs) -> ExitCode {
    let server = match vpl_web::Server::start(args.listen) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: cannot listen on {}: {e}", args.listen);
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if !server.addr().ip().is_loopback() {
        eprintln!(
            "warning: the playground has no authentication; anyone who reaches {} can use it",
            server.addr()
        );
    }
    // Tests and scripts read the address from this first line.
    println!("VPL playground: {}", server.url("/"));
    match server.wait() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
