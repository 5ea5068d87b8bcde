//! A JSON answer written in parts (issue 42, F3: a read's peak memory
//! against the body that stored the value it reads).
//!
//! The status answer of an execution with a long result holds the result's
//! text, inflated from the store straight into the part that ends with it,
//! and the result's plain form in the next part: sent as they are, one
//! after the other, so that neither is copied into a buffer of the whole.

use axum::body::{Body, Bytes};
use http_body::{Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A JSON text in the order of its parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnswerText(Vec<String>);

impl AnswerText {
    /// The text of these parts, in this order.
    pub fn from_parts(parts: Vec<String>) -> AnswerText {
        AnswerText(parts)
    }

    /// The parts.
    pub fn parts(&self) -> &[String] {
        &self.0
    }

    /// The text's length in bytes.
    pub fn len(&self) -> usize {
        self.0.iter().map(String::len).sum()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the text to `out`.
    pub fn write_to(&self, out: &mut String) {
        for part in &self.0 {
            out.push_str(part);
        }
    }

    /// The whole text (a single part is moved, not copied).
    pub fn into_string(mut self) -> String {
        if self.0.len() == 1 {
            return self.0.pop().unwrap_or_default();
        }
        let mut text = String::with_capacity(self.len());
        self.write_to(&mut text);
        text
    }

    /// A response body sending the parts in order, with their total length
    /// (so `Content-Length`).
    pub fn into_body(self) -> Body {
        let remaining = self.len() as u64;
        Body::new(PartsBody {
            parts: self.0.into_iter().map(Bytes::from).collect(),
            remaining,
        })
    }
}

/// The body of [`AnswerText::into_body`].
struct PartsBody {
    parts: VecDeque<Bytes>,
    /// Bytes not yet sent.
    remaining: u64,
}

impl http_body::Body for PartsBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let part = self.parts.pop_front();
        if let Some(part) = &part {
            self.remaining = self.remaining.saturating_sub(part.len() as u64);
        }
        Poll::Ready(part.map(|p| Ok(Frame::data(p))))
    }

    fn is_end_stream(&self) -> bool {
        self.parts.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_sends_the_parts_in_order_with_their_length() {
        let answer = AnswerText::from_parts(vec!["{\"a\":".into(), String::new(), "1}".into()]);
        assert_eq!(answer.len(), 7);
        let body = answer.clone().into_body();
        assert_eq!(http_body::Body::size_hint(&body).exact(), Some(7));
        let bytes = axum::body::to_bytes(body, 100).await.unwrap();
        assert_eq!(&bytes[..], b"{\"a\":1}");
        assert_eq!(answer.into_string(), "{\"a\":1}");
    }
}
