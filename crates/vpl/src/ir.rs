//! The canonical object model (spec sections 3–8).
