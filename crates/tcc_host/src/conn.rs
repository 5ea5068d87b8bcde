//! The service's connection layer (issue 42, F5): accepts connections up
//! to a cap and serves each with HTTP/1.1 or HTTP/2 (hyper, through
//! `hyper-util`), with the timeouts `axum::serve` does not set:
//!
//! - **header read**: a request's line and headers must arrive within
//!   [`ConnLimits::header_read`] of the connection's first byte or of the
//!   previous response (so an idle HTTP/1.1 keep-alive connection is closed
//!   after it too), else the connection is closed;
//! - **idle**: a connection on which nothing was read or written for
//!   [`ConnLimits::idle`] is closed (HTTP/2 connections, and requests whose
//!   body stops arriving, which the request timeout also ends);
//! - **connections**: at most [`ConnLimits::max_connections`] are open;
//!   further clients wait in the listen backlog until one closes.
//!
//! Shutdown is graceful: the listener closes, each connection finishes
//! the requests in flight and closes, and [`serve`] returns when all have.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

/// Connection limits of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// Longest wait for a request's line and headers.
    pub header_read: Duration,
    /// Longest a connection may stay without reading or writing a byte.
    pub idle: Duration,
    /// Most connections open at once.
    pub max_connections: usize,
}

impl Default for ConnLimits {
    fn default() -> ConnLimits {
        ConnLimits {
            header_read: Duration::from_secs(10),
            idle: Duration::from_secs(60),
            max_connections: 1024,
        }
    }
}

/// A TCP stream that records when it last read or wrote a byte.
struct Tracked {
    inner: TcpStream,
    epoch: Instant,
    /// Milliseconds since `epoch` of the last activity.
    last: Arc<AtomicU64>,
}

impl Tracked {
    fn touch(&self) {
        self.last
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.touch();
        }
        r
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }

    /// Forwarded, so that hyper writes a response's head and body parts
    /// with one `writev` instead of first copying each body part into its
    /// own buffer (it does when a stream is not vectored: a 2 MB answer
    /// held twice, issue 42, F3).
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Resolves once `stop` is true (or its sender is gone); holds no borrow
/// of the channel across the wait's end, so the future stays `Send`.
async fn stopping(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await.map(|_| ());
}

/// Serves `app` on `listener` under `limits` until `stop` turns true, then
/// drains (see the module documentation).
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnLimits,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // Wait for a free slot before accepting: clients beyond the cap
        // queue in the backlog instead of being served.
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = stopping(&mut stop) => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little
                    // rather than spin.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stopping(&mut stop) => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let stop = stop.clone();
        connections.spawn(async move {
            connection(stream, app, limits, stop).await;
            drop(permit);
        });
        // Reap finished connection tasks as we go.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
    Ok(())
}

async fn connection(
    stream: TcpStream,
    app: axum::Router,
    limits: ConnLimits,
    mut stop: watch::Receiver<bool>,
) {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    let epoch = Instant::now();
    let last = Arc::new(AtomicU64::new(0));
    let io = TokioIo::new(Tracked {
        inner: stream,
        epoch,
        last: last.clone(),
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read)
        .keep_alive(true);
    builder.http2().timer(TokioTimer::new());
    let service = hyper_util::service::TowerToHyperService::new(app);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let check = (limits.idle / 4).max(Duration::from_millis(10));
    let mut draining = false;
    loop {
        tokio::select! {
            r = conn.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            _ = stopping(&mut stop), if !draining => {
                draining = true;
                conn.as_mut().graceful_shutdown();
            }
            _ = tokio::time::sleep(check) => {
                let idle_ms = (epoch.elapsed().as_millis() as u64)
                    .saturating_sub(last.load(Ordering::Relaxed));
                if idle_ms >= limits.idle.as_millis() as u64 {
                    tracing::debug!(idle_ms, "closing an idle connection");
                    return;
                }
            }
        }
    }
}
