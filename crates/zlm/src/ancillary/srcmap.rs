//! The source-map record (ancillary kind 1, docs/zlm/ancillary.md): for
//! every function of a module, keyed by its function-signature ID, the file,
//! line and column of its declaration and of each body operation.
//!
//! ```text
//! u32 file count; per file: u32 length, UTF-8 path (nonempty)
//! u32 function count; per function, strictly ascending by ID:
//!   ID (32 bytes), u32 length + UTF-8 `Decl.function`,
//!   position (u32 file, u32 line, u32 column), u32 operation count;
//!   per operation, strictly ascending by (place, index, ordinal):
//!     u32 place (0 flow block, 1 cleanup-edge recipe), u32 block or edge,
//!     u32 ordinal, position
//! ```
//! Lines and columns count from 1 (columns in code points); a file index
//! names an entry of the file list.

use super::bytes::{Cursor, len_u32, put_str, put_u32};
use crate::check::Checked;
use crate::error::{Error, Result, code};
use crate::hash::Id;
use crate::interp::Fault;
use crate::model::{Module, OpRef};
use crate::text::FnPositions;

/// A source position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// Index into [`SourceMap::files`].
    pub file: u32,
    /// 1-based line.
    pub line: u32,
    /// 1-based column in code points.
    pub column: u32,
}

/// One function's positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MappedFunction {
    /// Function-signature ID.
    pub id: Id,
    /// `Decl.function`.
    pub name: String,
    /// Where the function is declared.
    pub at: Position,
    /// Every mapped operation, ascending.
    pub ops: Vec<(OpRef, Position)>,
}

/// A source map.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceMap {
    /// Source files, as the producer named them.
    pub files: Vec<String>,
    /// Functions, ascending by ID.
    pub functions: Vec<MappedFunction>,
}

/// A fault or operation located in source: the file, line, column and the
/// function it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The file as the map names it.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `Decl.function`.
    pub function: String,
}

impl std::fmt::Display for Located {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{} in {}",
            self.file, self.line, self.column, self.function
        )
    }
}

impl SourceMap {
    /// The map of `module`, parsed from text file `file` with `positions`
    /// ([`crate::text::parse_with_positions`]): functions keyed by their
    /// function-signature IDs, computed from `module`.
    pub fn from_text(file: &str, module: &Module, positions: &[FnPositions]) -> Result<SourceMap> {
        let (ids, _) = crate::ids::compute(module, false)?;
        let at = |line: u32, column: u32| Position {
            file: 0,
            line,
            column,
        };
        let mut functions = Vec::with_capacity(positions.len());
        for p in positions {
            let (Some(decl), Some(decl_ids)) =
                (module.declarations.get(p.decl), ids.decls.get(p.decl))
            else {
                continue;
            };
            let (Some(function), Some(fn_ids)) = (
                decl.functions.get(p.function),
                decl_ids.functions.get(p.function),
            ) else {
                continue;
            };
            let mut ops: Vec<(OpRef, Position)> = p
                .ops
                .iter()
                .map(|&(r, line, column)| (r, at(line, column)))
                .collect();
            ops.sort();
            ops.dedup_by(|a, b| a.0 == b.0);
            functions.push(MappedFunction {
                id: fn_ids.sig,
                name: format!("{}.{}", decl.name, function.name),
                at: at(p.line, p.column),
                ops,
            });
        }
        functions.sort_by_key(|a| a.id);
        functions.dedup_by(|a, b| a.id == b.id);
        Ok(SourceMap {
            files: vec![file.to_string()],
            functions,
        })
    }

    /// The canonical body bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_u32(&mut out, len_u32(self.files.len()));
        for f in &self.files {
            put_str(&mut out, f);
        }
        put_u32(&mut out, len_u32(self.functions.len()));
        let pos = |out: &mut Vec<u8>, p: &Position| {
            put_u32(out, p.file);
            put_u32(out, p.line);
            put_u32(out, p.column);
        };
        for f in &self.functions {
            out.extend_from_slice(&f.id);
            put_str(&mut out, &f.name);
            pos(&mut out, &f.at);
            put_u32(&mut out, len_u32(f.ops.len()));
            for (r, p) in &f.ops {
                let (place, index, ordinal) = split_ref(r);
                put_u32(&mut out, place);
                put_u32(&mut out, index);
                put_u32(&mut out, ordinal);
                pos(&mut out, p);
            }
        }
        out
    }

    /// Reads a body (at file offset `base`), checking every count against
    /// the bytes left, every string, file index, position and order.
    pub fn decode(body: &[u8], base: u64) -> Result<SourceMap> {
        let mut c = Cursor::new(body, base, "source map");
        let files_n = c.count(5, "files")?;
        let mut files = Vec::with_capacity(files_n);
        for _ in 0..files_n {
            files.push(c.string("file name")?);
        }
        let fns_n = c.count(32 + 5 + 16, "functions")?;
        let mut functions: Vec<MappedFunction> = Vec::with_capacity(fns_n);
        let position = |c: &mut Cursor| -> Result<Position> {
            let at = c.offset();
            let p = Position {
                file: c.u32()?,
                line: c.u32()?,
                column: c.u32()?,
            };
            if p.file as usize >= files.len() || p.line == 0 || p.column == 0 {
                return Err(Error::at(
                    code::ANCILLARY_RECORD,
                    at,
                    format!(
                        "source map: position {}:{}:{} names no file or a zero line or column",
                        p.file, p.line, p.column
                    ),
                ));
            }
            Ok(p)
        };
        for _ in 0..fns_n {
            let at = c.offset();
            let id = c.id()?;
            if functions.last().is_some_and(|prev| prev.id >= id) {
                return Err(Error::at(
                    code::ANCILLARY_RECORD,
                    at,
                    "source map: functions are not strictly ascending by ID",
                ));
            }
            let name = c.string("function name")?;
            let fn_at = position(&mut c)?;
            let ops_n = c.count(24, "operations")?;
            let mut ops: Vec<(OpRef, Position)> = Vec::with_capacity(ops_n);
            for _ in 0..ops_n {
                let at = c.offset();
                let place = c.u32()?;
                let index = c.u32()?;
                let ordinal = c.u32()?;
                let r = match place {
                    0 => OpRef::Flow {
                        block: index,
                        ordinal,
                    },
                    1 => OpRef::Recipe {
                        edge: index,
                        ordinal,
                    },
                    _ => {
                        return Err(Error::at(
                            code::ANCILLARY_RECORD,
                            at,
                            format!("source map: operation place {place} is not 0 or 1"),
                        ));
                    }
                };
                if ops.last().is_some_and(|(prev, _)| *prev >= r) {
                    return Err(Error::at(
                        code::ANCILLARY_RECORD,
                        at,
                        "source map: operations are not strictly ascending",
                    ));
                }
                ops.push((r, position(&mut c)?));
            }
            functions.push(MappedFunction {
                id,
                name,
                at: fn_at,
                ops,
            });
        }
        c.end()?;
        Ok(SourceMap { files, functions })
    }

    /// The function with signature ID `id`.
    pub fn function(&self, id: &Id) -> Option<&MappedFunction> {
        self.functions
            .binary_search_by(|f| f.id.cmp(id))
            .ok()
            .map(|i| &self.functions[i])
    }

    /// Where operation `at` of function `id` is written (the function's
    /// own position when the operation is not mapped).
    pub fn position(&self, id: &Id, at: Option<OpRef>) -> Option<Located> {
        let f = self.function(id)?;
        let p = at
            .and_then(|r| {
                f.ops
                    .binary_search_by(|(x, _)| x.cmp(&r))
                    .ok()
                    .map(|i| f.ops[i].1)
            })
            .unwrap_or(f.at);
        Some(Located {
            file: self.files.get(p.file as usize)?.clone(),
            line: p.line,
            column: p.column,
            function: f.name.clone(),
        })
    }

    /// Where a rejection's `site` is written: the function by its
    /// `Decl.function` name, or by a bare function name exactly one mapped
    /// function has (`None` when neither is unique), then the operation the
    /// site names (`%B.O` or `%rE.O`), else the function's own position.
    /// Needs no decoded module, so it serves an artifact whose payload the
    /// decoder or the checker rejected (the container names the payload's
    /// address, so the map is the one written for these bytes).
    pub fn site(&self, site: &crate::error::Site) -> Option<Located> {
        let named = |exact: bool| -> Option<&MappedFunction> {
            let suffix = format!(".{}", site.function);
            let mut found = self.functions.iter().filter(|f| {
                if exact {
                    f.name == site.function
                } else {
                    f.name.ends_with(&suffix)
                }
            });
            let first = found.next()?;
            found.next().is_none().then_some(first)
        };
        let exact = self.functions.iter().any(|f| f.name == site.function);
        let f = if exact { named(true)? } else { named(false)? };
        self.position(&f.id, site.op_ref())
    }

    /// Where `fault` happened in `module` (the root of the run that
    /// faulted): its function found by name among the module's own
    /// functions (a provider's `module::Decl.function` or a name two
    /// functions share is not located), then its operation. Called only
    /// once a run has faulted, so no engine consults the map on its hot
    /// path.
    pub fn locate(&self, module: &Checked, fault: &Fault) -> Option<Located> {
        let m = module.module();
        let mut found = None;
        for (d, decl) in m.declarations.iter().enumerate() {
            for (f, function) in decl.functions.iter().enumerate() {
                if fault
                    .function
                    .strip_prefix(decl.name.as_str())
                    .and_then(|r| r.strip_prefix('.'))
                    == Some(function.name.as_str())
                {
                    if found.is_some() {
                        return None;
                    }
                    found = Some((d, f));
                }
            }
        }
        let (d, f) = found?;
        let id = module.ids().decls.get(d)?.functions.get(f)?.sig;
        let at = match (fault.block, fault.op) {
            (Some(block), Some(ordinal)) => Some(OpRef::Flow { block, ordinal }),
            _ => None,
        };
        self.position(&id, at)
    }
}

/// (place, block or edge, ordinal) of an operation reference.
fn split_ref(r: &OpRef) -> (u32, u32, u32) {
    match *r {
        OpRef::Flow { block, ordinal } => (0, block, ordinal),
        OpRef::Recipe { edge, ordinal } => (1, edge, ordinal),
    }
}

/// The byte offset of 1-based `line` and `column` (code points) in `text`,
/// if the text has that line (the column is clamped to the line's end).
pub fn offset_of(text: &str, line: u32, column: u32) -> Option<usize> {
    let mut start = 0usize;
    for (i, l) in text.split('\n').enumerate() {
        if i + 1 == line as usize {
            let col = l
                .char_indices()
                .nth(column.saturating_sub(1) as usize)
                .map_or(l.len(), |(b, _)| b);
            return Some(start + col);
        }
        start += l.len() + 1;
    }
    None
}
