//! The playground server refuses what a web page of another site could
//! send it, and closes connections that stall (issue 42, F2 and F5).

use std::io::{Read, Write};
use std::time::{Duration, Instant};
use vpl_web::Server;

/// One raw HTTP/1.1 exchange: the status code and the answer.
fn raw(server: &Server, head: &str, body: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "{head}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

#[test]
fn pages_of_other_sites_cannot_use_the_playground() {
    let server = Server::start(([127, 0, 0, 1], 0).into()).unwrap();
    let port = server.addr().port();
    let body = r#"{"source": ""}"#;
    let compile = |extra: &str| {
        raw(
            &server,
            &format!("POST /api/compile HTTP/1.1\r\nHost: 127.0.0.1:{port}{extra}"),
            body,
        )
    };
    let (status, answer) = compile("\r\nContent-Type: text/plain");
    assert_eq!(status, 415, "{answer}");
    let (status, answer) =
        compile("\r\nContent-Type: application/json\r\nOrigin: http://evil.example");
    assert_eq!(status, 403, "{answer}");
    let (status, answer) = raw(
        &server,
        &format!("GET /api/programs HTTP/1.1\r\nHost: evil.example:{port}"),
        "",
    );
    assert_eq!(status, 403, "{answer}");
    // The page itself, from its own origin.
    let (status, answer) = compile(&format!(
        "\r\nContent-Type: application/json\r\nOrigin: http://127.0.0.1:{port}"
    ));
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = raw(
        &server,
        &format!("GET / HTTP/1.1\r\nHost: localhost:{port}"),
        "",
    );
    assert_eq!(status, 200, "{answer}");
}

#[test]
fn a_connection_that_sends_half_a_request_is_closed() {
    let server = Server::start(([127, 0, 0, 1], 0).into()).unwrap();
    let mut s = std::net::TcpStream::connect(server.addr()).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: 127").unwrap();
    s.set_read_timeout(Some(
        vpl_web::admission::HEADER_TIMEOUT + Duration::from_secs(10),
    ))
    .unwrap();
    let started = Instant::now();
    let mut buf = [0u8; 256];
    match s.read(&mut buf) {
        Ok(n) => assert_eq!(n, 0, "{}", String::from_utf8_lossy(&buf[..n])),
        Err(e) => assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "still open after {:?}",
            started.elapsed()
        ),
    }
    assert!(started.elapsed() < vpl_web::admission::HEADER_TIMEOUT + Duration::from_secs(5));
}
