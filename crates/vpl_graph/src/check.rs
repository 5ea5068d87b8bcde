//! Structure: records, sub-graph signatures, nodes, edges, cycles and the
//! topological order of each graph, before any type is inferred.

use crate::error::{ErrorKind, GraphError};
use crate::format::{Document, RawEdge, RawNode};
use crate::nodes::{self, Kind};
use crate::types::{Records, Ty};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Where an input socket's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// The producing node (index in its graph's `nodes`).
    pub node: usize,
    /// The index of the producer's output socket.
    pub output: usize,
}

/// A node with its resolved inputs.
#[derive(Debug, Clone)]
pub struct Node {
    /// The node's id.
    pub id: String,
    /// Its kind and parameters.
    pub kind: Kind,
    /// Input socket names (a call's are its sub-graph's inputs; other
    /// kinds' are static, borrowed).
    pub inputs: Cow<'static, [Cow<'static, str>]>,
    /// The source of each input socket, if connected.
    pub sources: Sources,
}

/// The sources of a node's input sockets: up to four inline (every kind
/// but a call of a sub-graph with more inputs), so that a node's sources
/// cost no allocation; a slice of the sockets' sources by `Deref`.
#[derive(Debug, Clone)]
pub enum Sources {
    /// At most four sockets: the first `len` of `items`.
    Inline {
        /// How many sockets.
        len: u8,
        /// Their sources, then padding.
        items: [Option<Source>; 4],
    },
    /// More than four sockets.
    Heap(Vec<Option<Source>>),
}

impl Sources {
    /// `sockets` unconnected sources.
    pub fn unconnected(sockets: usize) -> Self {
        match u8::try_from(sockets) {
            Ok(len) if sockets <= 4 => Sources::Inline {
                len,
                items: [None; 4],
            },
            _ => Sources::Heap(vec![None; sockets]),
        }
    }
}

impl std::ops::Deref for Sources {
    type Target = [Option<Source>];
    fn deref(&self) -> &Self::Target {
        match self {
            Sources::Inline { len, items } => &items[..usize::from(*len)],
            Sources::Heap(list) => list,
        }
    }
}

impl std::ops::DerefMut for Sources {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Sources::Inline { len, items } => &mut items[..usize::from(*len)],
            Sources::Heap(list) => list,
        }
    }
}

impl Node {
    /// The source of input `socket`.
    pub fn source(&self, socket: &str) -> Option<Source> {
        let i = self.inputs.iter().position(|s| s == socket)?;
        self.sources.get(i).copied().flatten()
    }
}

/// A sub-graph's signature.
#[derive(Debug, Clone)]
pub struct Signature {
    /// Its name.
    pub name: String,
    /// Its inputs, in order.
    pub inputs: Vec<(String, Ty)>,
    /// Its output type.
    pub output: Ty,
}

/// One graph (the material or a sub-graph) with its order.
#[derive(Debug, Clone)]
pub struct Graph {
    /// `None` for the material, else the sub-graph's index.
    pub function: Option<usize>,
    /// Nodes in file order.
    pub nodes: Vec<Node>,
    /// A topological order (producers first; ties broken by id).
    pub order: Vec<usize>,
}

/// A structurally valid document.
#[derive(Debug, Clone)]
pub struct Checked {
    /// Declared records.
    pub records: Records,
    /// Sub-graph signatures, in file order.
    pub signatures: Vec<Signature>,
    /// Sub-graphs, in file order.
    pub functions: Vec<Graph>,
    /// The material graph.
    pub main: Graph,
}

/// Node index by id.
type ById<'a> = HashMap<&'a str, usize>;

/// Upper bound on nodes per graph and sub-graphs per document.
pub const MAX_NODES: usize = 100_000;

/// Checks the structure of `doc`, returning every error found.
pub fn check(doc: &Document) -> Result<Checked, Vec<GraphError>> {
    let mut errors = Vec::new();
    if doc.version != 1 {
        return Err(vec![GraphError::new(
            ErrorKind::Json,
            format!(
                "graph format version {} (this compiler reads 1)",
                doc.version
            ),
        )]);
    }
    let total: usize = doc.nodes.len() + doc.functions.iter().map(|f| f.nodes.len()).sum::<usize>();
    if total > MAX_NODES || doc.functions.len() > MAX_NODES || doc.records.len() > MAX_NODES {
        return Err(vec![GraphError::new(
            ErrorKind::Limit,
            format!("a graph document holds at most {MAX_NODES} nodes, sub-graphs and records"),
        )]);
    }
    let records = records(doc, &mut errors);
    let signatures = signatures(doc, &records, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut functions = Vec::new();
    for (i, f) in doc.functions.iter().enumerate() {
        let name = Some(f.name.as_str());
        match graph(Some(i), &f.nodes, &f.edges, &records, &signatures) {
            Ok(g) => functions.push(g),
            Err(es) => errors.extend(es.into_iter().map(|e| e.in_function(name))),
        }
    }
    let main = graph(None, &doc.nodes, &doc.edges, &records, &signatures);
    let main = match main {
        Ok(g) => g,
        Err(es) => {
            errors.extend(es);
            return Err(errors);
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    recursion(&signatures, &functions, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Checked {
        records,
        signatures,
        functions,
        main,
    })
}

/// Record names first (so fields may name any record), then fields, then
/// a check that no record contains itself.
fn records(doc: &Document, errors: &mut Vec<GraphError>) -> Records {
    let mut records = Records::default();
    for r in &doc.records {
        if r.name.is_empty()
            || !nodes::valid_id(&r.name)
            || Ty::parse(&r.name, &Records::default()).is_ok()
        {
            errors.push(GraphError::new(
                ErrorKind::Name,
                format!(
                    "record name {:?} must be an identifier that is not a built-in type",
                    r.name
                ),
            ));
        } else if records.find(&r.name).is_some() {
            errors.push(GraphError::new(
                ErrorKind::Name,
                format!("record {:?} is declared twice", r.name),
            ));
        }
        records.names.push(r.name.clone());
    }
    for r in &doc.records {
        let mut fields = Vec::new();
        let mut seen = BTreeSet::new();
        for f in &r.fields {
            if f.name.is_empty() || !seen.insert(f.name.as_str()) {
                errors.push(GraphError::new(
                    ErrorKind::Name,
                    format!(
                        "record {:?}: field name {:?} is empty or repeated",
                        r.name, f.name
                    ),
                ));
            }
            match Ty::parse(&f.ty, &records) {
                Ok(Ty::Sampler) => errors.push(GraphError::new(
                    ErrorKind::Type,
                    format!(
                        "record {:?}: field {:?} cannot be a sampler",
                        r.name, f.name
                    ),
                )),
                Ok(t) => fields.push((f.name.clone(), t)),
                Err(m) => errors.push(GraphError::new(
                    ErrorKind::Type,
                    format!("record {:?}: {m}", r.name),
                )),
            }
        }
        records.fields.push(fields);
    }
    // A record reaching itself through fields and array elements.
    for start in 0..records.names.len() {
        let mut stack = vec![start];
        let mut seen = BTreeSet::new();
        while let Some(r) = stack.pop() {
            for (_, t) in records.fields_of(r) {
                let mut t = t;
                while let Ty::Array(e, _) = t {
                    t = e;
                }
                if let Ty::Record(next) = t {
                    if *next == start {
                        errors.push(GraphError::new(
                            ErrorKind::Cycle,
                            format!("record {:?} contains itself", records.names[start]),
                        ));
                        stack.clear();
                        break;
                    }
                    if seen.insert(*next) {
                        stack.push(*next);
                    }
                }
            }
        }
    }
    records
}

fn signatures(doc: &Document, records: &Records, errors: &mut Vec<GraphError>) -> Vec<Signature> {
    let mut out: Vec<Signature> = Vec::new();
    for f in &doc.functions {
        let name = Some(f.name.as_str());
        if !nodes::valid_id(&f.name) || out.iter().any(|s| s.name == f.name) {
            errors.push(
                GraphError::new(
                    ErrorKind::Name,
                    format!("sub-graph name {:?} must be a unique identifier", f.name),
                )
                .in_function(name),
            );
        }
        let plain = |s: &str, what: &str| -> Result<Ty, GraphError> {
            match Ty::parse(s, records) {
                Ok(t) if t.has_sampler(records) => Err(GraphError::new(
                    ErrorKind::Type,
                    format!("{what} cannot hold a sampler"),
                )),
                Ok(t) => Ok(t),
                Err(m) => Err(GraphError::new(ErrorKind::Type, format!("{what}: {m}"))),
            }
        };
        let mut inputs = Vec::new();
        for p in &f.inputs {
            if p.name.is_empty() || inputs.iter().any(|(n, _): &(String, Ty)| *n == p.name) {
                errors.push(
                    GraphError::new(
                        ErrorKind::Name,
                        format!("input name {:?} is empty or repeated", p.name),
                    )
                    .in_function(name),
                );
            }
            match plain(&p.ty, &format!("input {:?}", p.name)) {
                Ok(t) => inputs.push((p.name.clone(), t)),
                Err(e) => errors.push(e.in_function(name)),
            }
        }
        let output = match plain(&f.output, "output") {
            Ok(t) => t,
            Err(e) => {
                errors.push(e.in_function(name));
                Ty::FLOAT
            }
        };
        out.push(Signature {
            name: f.name.clone(),
            inputs,
            output,
        });
    }
    out
}

/// Parses one graph's nodes, resolves its edges and orders it.
fn graph(
    function: Option<usize>,
    raw_nodes: &[RawNode],
    raw_edges: &[RawEdge],
    records: &Records,
    signatures: &[Signature],
) -> Result<Graph, Vec<GraphError>> {
    let mut errors = Vec::new();
    let mut by_id = ById::with_capacity(raw_nodes.len());
    let mut nodes = Vec::with_capacity(raw_nodes.len());
    for raw in raw_nodes {
        if !nodes::valid_id(&raw.id) {
            errors.push(GraphError::new(
                ErrorKind::Node,
                format!("node id {:?} must be 1 to 64 ASCII letters, digits or `_`, not starting with a digit", raw.id),
            ));
        } else if by_id.insert(&raw.id, nodes.len()).is_some() {
            errors.push(GraphError::new(ErrorKind::Node, "duplicate node id").at_node(&raw.id));
        }
        let kind = match nodes::parse(raw, records) {
            Ok(k) => k,
            Err(e) => {
                errors.push(e);
                Kind::Return
            }
        };
        let inputs: Cow<'static, [Cow<'static, str>]> = match &kind {
            Kind::Call { function: name } => match signatures.iter().find(|s| s.name == *name) {
                Some(s) => Cow::Owned(
                    s.inputs
                        .iter()
                        .map(|(n, _)| Cow::Owned(n.clone()))
                        .collect(),
                ),
                None => {
                    errors.push(
                        GraphError::new(ErrorKind::Name, format!("no sub-graph named {name:?}"))
                            .at_node(&raw.id),
                    );
                    Cow::Borrowed(&[])
                }
            },
            k => Cow::Borrowed(k.inputs()),
        };
        let placement = match (&kind, function) {
            (k, Some(_)) if k.is_output() => {
                Some("material outputs belong to the main graph; a sub-graph ends in `return`")
            }
            (Kind::Return | Kind::Parameter { .. }, None) => {
                Some("`return` and `parameter` nodes belong to sub-graphs")
            }
            _ => None,
        };
        if let Some(m) = placement {
            errors.push(GraphError::new(ErrorKind::Output, m).at_node(&raw.id));
        }
        let sources = Sources::unconnected(inputs.len());
        nodes.push(Node {
            id: raw.id.to_string(),
            kind,
            inputs,
            sources,
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    for e in raw_edges {
        let from = endpoint(&e.from, &by_id, &nodes, true);
        let to = endpoint(&e.to, &by_id, &nodes, false);
        match (from, to) {
            (Ok((fnode, fsock)), Ok((tnode, tsock))) => {
                let slot = &mut nodes[tnode].sources[tsock];
                if slot.is_some() {
                    errors.push(
                        GraphError::new(ErrorKind::Edge, "this input already has an edge")
                            .at_node(&nodes[tnode].id)
                            .at_socket(&nodes[tnode].inputs[tsock]),
                    );
                } else {
                    *slot = Some(Source {
                        node: fnode,
                        output: fsock,
                    });
                }
            }
            (Err(e), _) | (_, Err(e)) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let order = topological(&nodes)?;
    Ok(Graph {
        function,
        nodes,
        order,
    })
}

/// Resolves `NODE.SOCKET` (or `NODE`, the first socket) to a node index
/// and socket index.
fn endpoint(
    spec: &str,
    by_id: &ById,
    nodes: &[Node],
    output: bool,
) -> Result<(usize, usize), GraphError> {
    let (id, socket) = match spec.split_once('.') {
        Some((n, s)) => (n, Some(s)),
        None => (spec, None),
    };
    let Some(&n) = by_id.get(id) else {
        return Err(GraphError::new(
            ErrorKind::Edge,
            format!("edge endpoint {spec:?} names no node"),
        ));
    };
    let node = &nodes[n];
    let count = if output {
        node.kind.outputs().len()
    } else {
        node.inputs.len()
    };
    let index = match socket {
        Some(s) if output => node.kind.outputs().iter().position(|x| *x == s),
        Some(s) => node.inputs.iter().position(|x| x == s),
        None => (count > 0).then_some(0),
    };
    index.map(|i| (n, i)).ok_or_else(|| {
        let names: Vec<&str> = if output {
            node.kind.outputs().to_vec()
        } else {
            node.inputs.iter().map(|s| &**s).collect()
        };
        let dir = if output { "output" } else { "input" };
        let e = GraphError::new(
            ErrorKind::Edge,
            format!(
                "no {dir} socket {:?} (its {dir}s: {})",
                socket.unwrap_or(""),
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        )
        .at_node(&node.id);
        match socket {
            Some(s) => e.at_socket(s),
            None => e,
        }
    })
}

/// Kahn's algorithm, ready nodes taken in id order; what remains lies on
/// or behind a cycle, one of which is reported.
fn topological(nodes: &[Node]) -> Result<Vec<usize>, Vec<GraphError>> {
    let mut indegree = vec![0usize; nodes.len()];
    // Each node's users, flat: those of node `n` are
    // `users[first[n]..first[n + 1]]`, in node order.
    let mut first = vec![0usize; nodes.len() + 1];
    for (i, n) in nodes.iter().enumerate() {
        for s in n.sources.iter().flatten() {
            indegree[i] += 1;
            first[s.node + 1] += 1;
        }
    }
    for n in 0..nodes.len() {
        first[n + 1] += first[n];
    }
    let mut users = vec![0usize; first[nodes.len()]];
    let mut next = first.clone();
    for (i, n) in nodes.iter().enumerate() {
        for s in n.sources.iter().flatten() {
            users[next[s.node]] = i;
            next[s.node] += 1;
        }
    }
    let mut ready: BTreeMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .filter(|(i, _)| indegree[*i] == 0)
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some((_, i)) = ready.pop_first() {
        order.push(i);
        for &u in &users[first[i]..first[i + 1]] {
            indegree[u] -= 1;
            if indegree[u] == 0 {
                ready.insert(nodes[u].id.as_str(), u);
            }
        }
    }
    if order.len() == nodes.len() {
        return Ok(order);
    }
    // Walk producers from a remaining node until one repeats: that is a cycle.
    let Some(start) = (0..nodes.len()).find(|i| indegree[*i] > 0) else {
        return Ok(order);
    };
    let mut path = vec![start];
    let mut at = start;
    while let Some(prev) = nodes[at]
        .sources
        .iter()
        .flatten()
        .map(|s| s.node)
        .find(|p| indegree[*p] > 0)
    {
        if let Some(pos) = path.iter().position(|p| *p == prev) {
            path.drain(..pos);
            break;
        }
        path.push(prev);
        at = prev;
    }
    path.reverse();
    let names: Vec<&str> = path.iter().map(|i| nodes[*i].id.as_str()).collect();
    let first = path.first().copied().unwrap_or(start);
    Err(vec![
        GraphError::new(
            ErrorKind::Cycle,
            format!(
                "the edges form a cycle: {} -> {}",
                names.join(" -> "),
                nodes[first].id
            ),
        )
        .at_node(&nodes[first].id),
    ])
}

/// Sub-graphs calling themselves, directly or through others.
fn recursion(signatures: &[Signature], functions: &[Graph], errors: &mut Vec<GraphError>) {
    let calls: Vec<BTreeSet<usize>> = functions
        .iter()
        .map(|g| {
            g.nodes
                .iter()
                .filter_map(|n| match &n.kind {
                    Kind::Call { function } => signatures.iter().position(|s| s.name == *function),
                    _ => None,
                })
                .collect()
        })
        .collect();
    for start in 0..functions.len() {
        let mut stack: Vec<usize> = calls[start].iter().copied().collect();
        let mut seen = BTreeSet::new();
        while let Some(f) = stack.pop() {
            if f == start {
                errors.push(
                    GraphError::new(ErrorKind::Cycle, "this sub-graph calls itself (directly or through others); VPL has no recursion")
                        .in_function(Some(&signatures[start].name)),
                );
                break;
            }
            if seen.insert(f) {
                stack.extend(calls.get(f).into_iter().flatten().copied());
            }
        }
    }
}
