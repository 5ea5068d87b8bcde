//! A value handed from the thread that runs a group commit to a caller
//! waiting for it: a lock and an unpark per value, instead of a channel
//! (whose allocation, waker queue and wake-up are paid in the group
//! leader's serial section once per write).

use std::sync::Mutex;
use std::thread::Thread;

/// One waiting thread's mailbox: [`Slot::put`] from any thread,
/// [`Slot::take`] on the thread that made it.
pub(crate) struct Slot<T> {
    value: Mutex<Option<T>>,
    thread: Thread,
}

impl<T> Slot<T> {
    /// An empty slot for the calling thread to wait on.
    pub(crate) fn for_current_thread() -> Slot<T> {
        Slot {
            value: Mutex::new(None),
            thread: std::thread::current(),
        }
    }

    /// Stores `value` (replacing one not yet taken) and wakes the waiter.
    pub(crate) fn put(&self, value: T) {
        if let Ok(mut v) = self.value.lock() {
            *v = Some(value);
        }
        self.thread.unpark();
    }

    /// Waits until a value is stored and takes it; `None` if the slot's
    /// lock was poisoned (a thread panicked while storing).
    pub(crate) fn take(&self) -> Option<T> {
        loop {
            match self.value.lock() {
                Ok(mut v) => {
                    if let Some(value) = v.take() {
                        return Some(value);
                    }
                }
                Err(_) => return None,
            }
            std::thread::park();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Slot;
    use std::sync::Arc;

    #[test]
    fn a_value_put_by_another_thread_is_taken_once_in_order() {
        let slot = Arc::new(Slot::for_current_thread());
        for i in 0..100 {
            let s = slot.clone();
            let t = std::thread::spawn(move || s.put(i));
            assert_eq!(slot.take(), Some(i));
            t.join().unwrap();
        }
        slot.put(7);
        slot.put(8);
        assert_eq!(slot.take(), Some(8), "a value not yet taken is replaced");
    }
}
