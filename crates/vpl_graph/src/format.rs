//! The JSON file format, as read (`docs/vpl/graph.md`): unknown fields are
//! refused, so a misspelt parameter is a diagnostic rather than ignored.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A material graph document.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Document<'a> {
    /// Format version; must be 1.
    pub version: u32,
    /// Record types that uniforms and sub-graph parameters may use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<RawRecord>,
    /// Reusable sub-graphs (each becomes a VPL helper function).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(borrow)]
    pub functions: Vec<RawFunction<'a>>,
    /// The material's nodes.
    #[serde(borrow)]
    pub nodes: Vec<RawNode<'a>>,
    /// The material's edges.
    #[serde(default)]
    #[serde(borrow)]
    pub edges: Vec<RawEdge<'a>>,
}

/// A record type declaration.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawRecord {
    /// The record's name (also its type spelling).
    pub name: String,
    /// Its fields, in order.
    pub fields: Vec<RawField>,
}

/// A named, typed field, sub-graph input or sub-graph output.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawField {
    /// The name.
    pub name: String,
    /// The type spelling.
    #[serde(rename = "type")]
    pub ty: String,
}

/// A sub-graph: typed inputs, one typed output, nodes and edges.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawFunction<'a> {
    /// The name `call` nodes use (also the helper's VPL display name).
    pub name: String,
    /// Its inputs (`parameter` nodes read them), in order.
    #[serde(default)]
    pub inputs: Vec<RawField>,
    /// The type its `return` node produces.
    pub output: String,
    /// Its nodes.
    #[serde(borrow)]
    pub nodes: Vec<RawNode<'a>>,
    /// Its edges.
    #[serde(default)]
    #[serde(borrow)]
    pub edges: Vec<RawEdge<'a>>,
}

/// A node: an id, a kind and the kind's parameters.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawNode<'a> {
    /// Unique within its graph; ASCII letters, digits and `_`, not
    /// starting with a digit.
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    /// The node kind (`docs/vpl/graph.md` lists them).
    #[serde(borrow)]
    pub kind: Cow<'a, str>,
    /// A value type (`constant`, `uniform`, `combine`, `convert`,
    /// `fragment_output`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
    /// A constant's value: a number, a boolean or an array of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// A uniform, texture, parameter or output name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A comparison (`less`, `equal`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// A swizzle pattern (`xyz`, `rgb`, `wzyx`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A `call` node's sub-graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// A `member` node's field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// An `index` node's constant index (instead of its `index` socket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<i64>,
    /// A `fragment_output` node's location (default: unspecified).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<i32>,
    /// Texture addressing: `repeat` (default) or `clamp_to_edge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap: Option<String>,
    /// Minification: `linear` (default), `nearest`, `nearest_mipmap_nearest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_filter: Option<String>,
    /// Magnification: `linear` (default) or `nearest`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mag_filter: Option<String>,
    /// Editor-only: the slider range of a constant (`[min, max]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[f64; 2]>,
    /// Editor-only: the node's position on the canvas (`[x, y]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<[f64; 2]>,
}

/// An edge from an output socket to an input socket, each spelt
/// `NODE.SOCKET` (`NODE` alone names the node's first output).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawEdge<'a> {
    /// The producing node and output socket.
    #[serde(borrow)]
    pub from: Cow<'a, str>,
    /// The consuming node and input socket.
    #[serde(borrow)]
    pub to: Cow<'a, str>,
}
