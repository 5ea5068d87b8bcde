//! Limits that a hostile artifact or continuation cannot exceed.
//!
//! Each limit, when reached, is a clear [`EngineError`](crate::EngineError)
//! (`TCC-R010`), never a hang, an abort or unbounded memory.

/// Resource limits of one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Most frames on the call stack (entry frame included).
    pub max_call_depth: usize,
    /// Most values on the shared operand stack.
    pub max_stack: usize,
    /// Most heap cells (ids); holes count, since ids are never reused.
    pub max_heap_cells: usize,
    /// Most UTF-8 bytes in a runtime string (concatenation results).
    pub max_string_bytes: usize,
    /// Most elements of one array or properties of one object.
    pub max_collection_len: usize,
    /// Most exception handlers on the try stack.
    pub max_try_depth: usize,
    /// Most bytes of a continuation, delta or host message accepted by the decoders.
    pub max_message_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_call_depth: 1024,
            max_stack: 1 << 20,
            max_heap_cells: 1 << 22,
            max_string_bytes: 1 << 24,
            max_collection_len: 1 << 24,
            max_try_depth: 1 << 16,
            max_message_bytes: 1 << 28,
        }
    }
}
