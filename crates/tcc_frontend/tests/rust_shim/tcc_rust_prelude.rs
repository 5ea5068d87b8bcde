//! Test-only stand-in for the Rust subset's prelude, so that `rustc` can
//! type-check, move-check and (for programs without durable operations) run
//! the same sources irkit compiles. `Show` prints a value in the encoding
//! irkit's artifacts use (enums as `$tag`/`$0` objects, `()` as undefined).

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// The subset's vector: length and indexes are `f64`.
pub struct Vec<T>(std::vec::Vec<T>);

impl<T> Default for Vec<T> {
    fn default() -> Self {
        Vec(std::vec::Vec::new())
    }
}

impl<T> Vec<T> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, value: T) {
        self.0.push(value);
    }
    pub fn len(&self) -> f64 {
        self.0.len() as f64
    }
}

impl<T> std::ops::Index<f64> for Vec<T> {
    type Output = T;
    fn index(&self, i: f64) -> &T {
        &self.0[i as usize]
    }
}

impl<T> std::ops::IndexMut<f64> for Vec<T> {
    fn index_mut(&mut self, i: f64) -> &mut T {
        &mut self.0[i as usize]
    }
}

impl<T> IntoIterator for Vec<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

async fn never<T>() -> T {
    std::future::pending().await
}

pub async fn effect<T>(_key: impl Into<String>, _body: impl FnOnce() -> T) -> Result<T, String> {
    never().await
}

pub async fn wait_for_event<T>(_name: impl Into<String>) -> Result<T, String> {
    never().await
}

pub async fn sleep(_ms: f64) -> Result<(), String> {
    never().await
}

pub async fn invoke<T, A>(_name: impl Into<String>, _args: A) -> Result<T, String> {
    never().await
}

pub async fn join<T>(
    _a: impl Future<Output = Result<T, String>>,
    _b: impl Future<Output = Result<T, String>>,
) -> Result<Vec<T>, String> {
    never().await
}

pub async fn race<T>(
    _a: impl Future<Output = Result<T, String>>,
    _b: impl Future<Output = Result<T, String>>,
) -> Result<T, String> {
    never().await
}

/// Runs a future that never waits (programs without durable operations).
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    match f.as_mut().poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the program waited"),
    }
}

/// A value as JSON, in irkit's encoding.
pub trait Show {
    fn show(&self) -> String;
}

impl Show for f64 {
    fn show(&self) -> String {
        format!("{self:?}")
    }
}

impl Show for bool {
    fn show(&self) -> String {
        self.to_string()
    }
}

impl Show for String {
    fn show(&self) -> String {
        format!("{self:?}")
    }
}

impl Show for &'static str {
    fn show(&self) -> String {
        format!("{self:?}")
    }
}

impl Show for () {
    fn show(&self) -> String {
        "\"<undefined>\"".to_string()
    }
}

impl<T: Show> Show for Vec<T> {
    fn show(&self) -> String {
        let items: std::vec::Vec<String> = self.0.iter().map(Show::show).collect();
        format!("[{}]", items.join(","))
    }
}

impl<T: Show> Show for Option<T> {
    fn show(&self) -> String {
        match self {
            Some(v) => format!("{{\"$tag\":\"Some\",\"$0\":{}}}", v.show()),
            None => "{\"$tag\":\"None\"}".to_string(),
        }
    }
}

impl<T: Show, E: Show> Show for Result<T, E> {
    fn show(&self) -> String {
        match self {
            Ok(v) => format!("{{\"$tag\":\"Ok\",\"$0\":{}}}", v.show()),
            Err(e) => format!("{{\"$tag\":\"Err\",\"$0\":{}}}", e.show()),
        }
    }
}

/// irkit's effect with input data (issue 33): `INPUT` is what the provider receives.
pub async fn effect_with<T, I>(
    _key: impl Into<String>,
    _input: I,
    _body: impl FnOnce() -> T,
) -> Result<T, String> {
    never().await
}
