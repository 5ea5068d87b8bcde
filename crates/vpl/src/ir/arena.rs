//! Typed arena storage and handles (naga-style).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// A typed index into an [`Arena`]. Handles are plain data: copying one does
/// not copy the object, and a handle is meaningful only for the arena (or
/// the module) that produced it. The verifier checks that every handle in a
/// module is in range before anything dereferences it.
pub struct Handle<T> {
    index: u32,
    marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// Creates a handle from a raw zero-based index.
    pub const fn from_index(index: u32) -> Self {
        Handle {
            index,
            marker: PhantomData,
        }
    }

    /// The zero-based position of the object in its arena (its list position).
    pub const fn index(self) -> usize {
        self.index as usize
    }

    /// The raw index.
    pub const fn raw(self) -> u32 {
        self.index
    }
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.index.cmp(&other.index)
    }
}
impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.index.hash(state);
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.index)
    }
}

/// An append-only ordered list of objects addressed by [`Handle`]s. The
/// arena order is the list order the spec talks about (e.g. a function's
/// block list; the first block is the entry block).
#[derive(Clone, PartialEq)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T: fmt::Debug> fmt::Debug for Arena<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.items.iter().enumerate())
            .finish()
    }
}

/// Error returned when an arena would exceed `u32::MAX` objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("arena capacity exceeded (at most {} objects)", u32::MAX)]
pub struct ArenaFull;

impl<T> Arena<T> {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an object and returns its handle.
    ///
    /// # Panics
    /// Panics if the arena already holds `u32::MAX` objects; use
    /// [`Arena::try_append`] where the count is input-derived.
    pub fn append(&mut self, value: T) -> Handle<T> {
        self.try_append(value).expect("arena capacity exceeded")
    }

    /// Removes and returns every object, in handle order.
    pub(crate) fn take_all(&mut self) -> Vec<T> {
        std::mem::take(&mut self.items)
    }

    /// Appends an object unless the arena is full.
    pub fn try_append(&mut self, value: T) -> Result<Handle<T>, ArenaFull> {
        let index = u32::try_from(self.items.len()).map_err(|_| ArenaFull)?;
        if index == u32::MAX {
            return Err(ArenaFull);
        }
        self.items.push(value);
        Ok(Handle::from_index(index))
    }

    /// The object behind `handle`, or `None` when the handle is out of range.
    pub fn get(&self, handle: Handle<T>) -> Option<&T> {
        self.items.get(handle.index())
    }

    /// Mutable access to the object behind `handle`.
    pub fn get_mut(&mut self, handle: Handle<T>) -> Option<&mut T> {
        self.items.get_mut(handle.index())
    }

    /// Whether `handle` addresses an object of this arena.
    pub fn contains(&self, handle: Handle<T>) -> bool {
        handle.index() < self.items.len()
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the arena is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Handles and objects in list order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (Handle<T>, &T)> + DoubleEndedIterator {
        self.items
            .iter()
            .enumerate()
            .map(|(i, v)| (Handle::from_index(i as u32), v))
    }

    /// Handles and mutable objects in list order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (Handle<T>, &mut T)> {
        self.items
            .iter_mut()
            .enumerate()
            .map(|(i, v)| (Handle::from_index(i as u32), v))
    }

    /// All handles in list order.
    pub fn handles(&self) -> impl ExactSizeIterator<Item = Handle<T>> + use<T> {
        (0..self.items.len() as u32).map(Handle::from_index)
    }

    /// The objects in list order, as a slice.
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, handle: Handle<T>) -> &T {
        &self.items[handle.index()]
    }
}

impl<T> std::ops::IndexMut<Handle<T>> for Arena<T> {
    fn index_mut(&mut self, handle: Handle<T>) -> &mut T {
        &mut self.items[handle.index()]
    }
}
