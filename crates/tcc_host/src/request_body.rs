//! Request bodies and HTTP/1.1 keep-alive.
//!
//! hyper closes an HTTP/1.1 connection after answering a request whose
//! body was not read to its end (it cannot find the next request's start),
//! without saying so in the response. A client that pooled the connection
//! then fails on its next request with "the connection closed before the
//! response was complete". That happens whenever a route answers before
//! reading the body (a 401, a namespace refusal, an unknown execution) and
//! the body arrived after the headers: rare on an idle machine, a test
//! flake under load (`irkit/tests/tcc_namespaces.rs`, 2 in 12 runs).
//!
//! So every request goes through [`prepare`] before routing: a body of at
//! most [`PREREAD_MAX`] bytes (by its `Content-Length`) is read in full
//! there, and any other body is wrapped to record whether it was read to
//! its end. [`finish`] adds `Connection: close` to the response of an
//! HTTP/1 request whose body was not, so the client does not reuse the
//! connection hyper is about to close.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, Version, header};
use axum::response::Response;
use http_body::{Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

/// Bodies of at most this many bytes are read before routing (the JSON
/// bodies of every control request; starts and events with large values
/// stay streamed to their handlers).
pub const PREREAD_MAX: u64 = 64 * 1024;

/// Whether the request's body has been read to its end.
#[derive(Debug, Clone)]
pub struct BodyRead(Arc<AtomicBool>);

impl BodyRead {
    /// True once the body's last frame was read (at once for an empty or
    /// pre-read body).
    pub fn to_end(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// A body that records in [`BodyRead`] when its end was reached.
struct Tracked {
    inner: Body,
    read: Arc<AtomicBool>,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        let ended = match &polled {
            Poll::Ready(None) => true,
            Poll::Ready(Some(Ok(_))) => self.inner.is_end_stream(),
            _ => false,
        };
        if ended {
            self.read.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Why [`prepare`] could not read a small body.
#[derive(Debug, thiserror::Error)]
#[error("reading the request body: {0}")]
pub struct BodyError(String);

/// Reads a small body in full, or wraps any other one to track it (see
/// the module documentation). An error is a body shorter than announced
/// (the client went away) or a stream error.
pub async fn prepare(req: Request) -> Result<(Request, BodyRead), BodyError> {
    let (parts, body) = req.into_parts();
    if body.is_end_stream() {
        let read = BodyRead(Arc::new(AtomicBool::new(true)));
        return Ok((Request::from_parts(parts, body), read));
    }
    if let Some(len) = body.size_hint().exact().filter(|n| *n <= PREREAD_MAX) {
        let bytes = axum::body::to_bytes(body, len as usize)
            .await
            .map_err(|e| BodyError(e.to_string()))?;
        let read = BodyRead(Arc::new(AtomicBool::new(true)));
        return Ok((Request::from_parts(parts, Body::from(bytes)), read));
    }
    let read = Arc::new(AtomicBool::new(false));
    let tracked = Tracked {
        inner: body,
        read: read.clone(),
    };
    Ok((
        Request::from_parts(parts, Body::new(tracked)),
        BodyRead(read),
    ))
}

/// Marks `response` `Connection: close` when the HTTP/1 request's body was
/// not read to its end (HTTP/2 streams end on their own; the header is not
/// allowed there).
pub fn finish(mut response: Response, version: Version, read: Option<&BodyRead>) -> Response {
    let unread = read.is_none_or(|r| !r.to_end());
    if unread && version <= Version::HTTP_11 {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    fn post(body: Body) -> Request {
        Request::builder()
            .method("POST")
            .uri("/v1/x")
            .body(body)
            .unwrap()
    }

    #[tokio::test]
    async fn a_small_body_is_read_before_routing() {
        let (req, read) = prepare(post(Body::from("{\"a\": 1}"))).await.unwrap();
        assert!(read.to_end());
        let bytes = axum::body::to_bytes(req.into_body(), 100).await.unwrap();
        assert_eq!(&bytes[..], b"{\"a\": 1}");
        let kept = finish(Response::new(Body::empty()), Version::HTTP_11, Some(&read));
        assert!(kept.headers().get(header::CONNECTION).is_none());
    }

    #[tokio::test]
    async fn a_streamed_body_left_unread_closes_the_connection() {
        // No exact length: streamed to the handler, tracked.
        let chunks = futures_stream(vec![Bytes::from_static(b"ab"), Bytes::from_static(b"cd")]);
        let (req, read) = prepare(post(chunks)).await.unwrap();
        assert!(!read.to_end());
        let unread = finish(
            Response::builder()
                .status(StatusCode::NOT_FOUND)
                .body(Body::empty())
                .unwrap(),
            Version::HTTP_11,
            Some(&read),
        );
        assert_eq!(unread.headers()[header::CONNECTION], "close");
        // Read to its end, the connection is kept.
        let bytes = axum::body::to_bytes(req.into_body(), 100).await.unwrap();
        assert_eq!(&bytes[..], b"abcd");
        assert!(read.to_end());
        let kept = finish(Response::new(Body::empty()), Version::HTTP_11, Some(&read));
        assert!(kept.headers().get(header::CONNECTION).is_none());
        // HTTP/2 never gets the header; a request never prepared is closed.
        let h2 = finish(Response::new(Body::empty()), Version::HTTP_2, None);
        assert!(h2.headers().get(header::CONNECTION).is_none());
        let none = finish(Response::new(Body::empty()), Version::HTTP_11, None);
        assert_eq!(none.headers()[header::CONNECTION], "close");
    }

    /// A body of `chunks` without a known length.
    fn futures_stream(chunks: Vec<Bytes>) -> Body {
        struct Chunks(std::collections::VecDeque<Bytes>);
        impl HttpBody for Chunks {
            type Data = Bytes;
            type Error = std::convert::Infallible;
            fn poll_frame(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
            ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
                Poll::Ready(self.0.pop_front().map(|b| Ok(Frame::data(b))))
            }
        }
        Body::new(Chunks(chunks.into()))
    }
}
