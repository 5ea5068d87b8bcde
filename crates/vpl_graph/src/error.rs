//! Graph diagnostics: every refusal names its stable code, and where it
//! applies the sub-graph, node and socket it is about.

use std::fmt;

/// The class of a graph diagnostic; each has one stable code
/// (`docs/diagnostics.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The file is not JSON of the graph format (syntax, unknown or
    /// missing field, wrong value kind, version).
    Json,
    /// A node is invalid on its own: unknown kind, duplicate or malformed
    /// id, missing or invalid parameter.
    Node,
    /// An edge names an unknown node or socket, or feeds an input twice.
    Edge,
    /// Edges form a cycle, or sub-graphs call each other recursively.
    Cycle,
    /// A required input socket is not connected.
    MissingInput,
    /// A value of the wrong type reaches a socket.
    Type,
    /// Output structure: no or several material outputs, duplicate
    /// output names or locations, a sub-graph without exactly one return.
    Output,
    /// Names that conflict: uniforms of one name with different types,
    /// one texture with two sampler states, unknown or duplicate records
    /// and sub-graphs.
    Name,
    /// A resource bound of the compiler (`docs/vpl/graph.md`).
    Limit,
}

impl ErrorKind {
    /// The stable diagnostic code.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Json => "VPL-G-JSON",
            ErrorKind::Node => "VPL-G-NODE",
            ErrorKind::Edge => "VPL-G-EDGE",
            ErrorKind::Cycle => "VPL-G-CYCLE",
            ErrorKind::MissingInput => "VPL-G-MISSING-INPUT",
            ErrorKind::Type => "VPL-G-TYPE",
            ErrorKind::Output => "VPL-G-OUTPUT",
            ErrorKind::Name => "VPL-G-NAME",
            ErrorKind::Limit => "VPL-G-LIMIT",
        }
    }

    /// Every kind, for documentation checks.
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Json,
        ErrorKind::Node,
        ErrorKind::Edge,
        ErrorKind::Cycle,
        ErrorKind::MissingInput,
        ErrorKind::Type,
        ErrorKind::Output,
        ErrorKind::Name,
        ErrorKind::Limit,
    ];
}

/// One graph diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphError {
    /// Its class and code.
    pub kind: ErrorKind,
    /// What is wrong, in words.
    pub message: String,
    /// The sub-graph (`functions[].name`) the node belongs to; `None` for
    /// the main graph.
    pub function: Option<String>,
    /// The node's id, where the error is about one node.
    pub node: Option<String>,
    /// The node's socket, where the error is about one socket.
    pub socket: Option<String>,
    /// 1-based line and column in the JSON text (syntax and schema errors).
    pub line: Option<u32>,
    /// See `line`.
    pub column: Option<u32>,
}

impl GraphError {
    /// An error with a message and nothing located yet.
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        GraphError {
            kind,
            message: message.into(),
            function: None,
            node: None,
            socket: None,
            line: None,
            column: None,
        }
    }

    /// The same error about node `node`.
    pub(crate) fn at_node(mut self, node: &str) -> Self {
        self.node = Some(node.to_string());
        self
    }

    /// The same error about socket `socket` of its node.
    pub(crate) fn at_socket(mut self, socket: &str) -> Self {
        self.socket = Some(socket.to_string());
        self
    }

    /// The same error inside sub-graph `function` (`None`: the main graph).
    pub(crate) fn in_function(mut self, function: Option<&str>) -> Self {
        if self.function.is_none() {
            self.function = function.map(str::to_string);
        }
        self
    }

    /// Where the error is, as `function/node.socket` (empty when unlocated).
    pub fn location(&self) -> String {
        let mut s = String::new();
        if let Some(f) = &self.function {
            s.push_str("function ");
            s.push_str(f);
            if self.node.is_some() {
                s.push_str(", ");
            }
        }
        if let Some(n) = &self.node {
            s.push_str("node ");
            s.push_str(n);
            if let Some(k) = &self.socket {
                s.push_str(", socket ");
                s.push_str(k);
            }
        }
        s
    }
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.location();
        if at.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{at}: {}", self.message)
        }
    }
}

/// Why [`crate::compile`] produced no module.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The graph is invalid (every diagnostic found, in a stable order).
    #[error("invalid material graph: {}", .0.first().map(ToString::to_string).unwrap_or_default())]
    Graph(Vec<GraphError>),
    /// The generated module was refused by the VPL verifier: a
    /// defect of this compiler, never of the graph (the property tests
    /// check that no graph reaches it).
    #[error("generated VPL was refused (a defect of the graph compiler): {0}")]
    Vpl(Box<vpl::text::Error>),
}

/// The byte offset of `"KEY": "VALUE"`'s value in `json` at or after `from`.
fn find_key_value(json: &str, key: &str, value: &str, from: usize) -> Option<usize> {
    let needle = format!("\"{value}\"");
    let mut start = from;
    while let Some(i) = json.get(start..)?.find(&needle) {
        let at = start + i;
        let before = json[..at].trim_end();
        if let Some(b) = before.strip_suffix(':')
            && b.trim_end().ends_with(&format!("\"{key}\""))
        {
            return Some(at);
        }
        start = at + needle.len();
    }
    None
}

impl GraphError {
    /// Where in `json` (the text the graph was read from) the error is: its
    /// line and column for syntax errors, else the located node's id.
    pub fn source_offset(&self, json: &str) -> Option<usize> {
        if let (Some(line), Some(column)) = (self.line, self.column) {
            let line_start = if line <= 1 {
                0
            } else {
                json.match_indices('\n')
                    .nth(usize::try_from(line).ok()? - 2)?
                    .0
                    + 1
            };
            let rest = json.get(line_start..)?;
            let col = usize::try_from(column).ok()?.saturating_sub(1);
            let delta = rest
                .char_indices()
                .nth(col)
                .map(|(i, _)| i)
                .unwrap_or(rest.len());
            return Some(line_start + delta);
        }
        let from = match &self.function {
            Some(f) => find_key_value(json, "name", f, 0)?,
            None => 0,
        };
        match &self.node {
            Some(n) => find_key_value(json, "id", n, from),
            None => self.function.as_ref().map(|_| from),
        }
    }
}
