//! The arguments verbs share, flattened (`#[command(flatten)]`) into each
//! verb's own: the input file(s) and `--format`.

use crate::diag::Format;
use std::path::PathBuf;

/// `--format`: how diagnostics, and a verb's machine-readable result, are printed.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct FormatArgs {
    /// Output format: `human` (rustc-like diagnostics on standard error) or
    /// `json` (one JSON object per line on standard output).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// One input file.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Input file (`-` for standard input).
    pub file: PathBuf,
}

/// One or more input files.
#[derive(clap::Args, Debug, Clone)]
pub struct InputsArgs {
    /// Input files (`-` for standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// A `--listen` address: `IP:PORT` or `HOST:PORT` (`localhost:0`), the host
/// name resolved once at start-up (IPv4 first, as most clients try it
/// first). Port 0 picks a free port.
pub fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs as _;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    if !text.contains(':') {
        return Err(format!(
            "expected HOST:PORT (e.g. localhost:0), got {text:?}"
        ));
    }
    let addrs: Vec<std::net::SocketAddr> = text
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {text:?}: {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| format!("{text:?} resolves to no address"))
}

#[cfg(test)]
mod tests {
    use super::parse_listen;

    #[test]
    fn listen_takes_addresses_and_host_names() {
        assert_eq!(
            parse_listen("127.0.0.1:7878").unwrap().to_string(),
            "127.0.0.1:7878"
        );
        let local = parse_listen("localhost:0").unwrap();
        assert!(local.ip().is_loopback() && local.port() == 0, "{local}");
        assert!(parse_listen("localhost").unwrap_err().contains("HOST:PORT"));
        assert!(parse_listen("localhost:99999").is_err());
    }
}
