//! The process's allocators, and how `irkit tcc serve` tunes them (issue 42,
//! F3: a request's peak memory against its body).
//!
//! Rust code allocates with mimalloc (many worker threads allocate per step;
//! glibc `malloc` took about 15 % of the host's CPU, docs/tcc/host.md,
//! Benchmarks). The bundled SQLite allocates with the C library's `malloc`.
//! Left at their defaults, both keep memory a request freed: mimalloc gives
//! freed pages back to the system only after a delay (1 s in the v3
//! that `libmimalloc-sys` builds, and a multiple of that for its arenas), so a drive's successive buffers, freed on different
//! threads, pile up; glibc raises its `mmap` threshold to the size of each
//! large block freed (up to 32 MiB), after which SQLite's multi-megabyte
//! record buffers come from the heap and stay there. [`tune_for_service`]
//! sets mimalloc's purge delay to 0 and fixes glibc's `mmap` and trim
//! thresholds at 128 KiB. Measured with `scripts/tcc-rss.sh` (docs/tcc/host.md,
//! F3): a start or an event of 99 990 zeros peaks at about half the growth.
//! `scripts/tcc-load.sh` throughput is unchanged within noise (same-run A/B
//! in the same section).
//!
//! A setting the user gave in the environment (`MIMALLOC_PURGE_DELAY`,
//! `MIMALLOC_RESET_DELAY`, `GLIBC_TUNABLES` with a `glibc.malloc.` tunable,
//! `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`) is left as it is.
//!
//! `unsafe`: two foreign calls that take plain integers and touch no Rust
//! memory: mimalloc's `mi_option_set` and glibc's `mallopt`.
#![allow(unsafe_code)]

/// mimalloc instead of glibc `malloc` for everything Rust allocates.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay`'s place in mimalloc's `mi_option_e` (the same in
/// the v2 and v3 headers `libmimalloc-sys` builds; its Rust bindings do not
/// name it). The tests pin it by the documented defaults of it and its
/// neighbours.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// What [`tune_for_service`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuned {
    /// mimalloc's purge delay set to 0.
    pub purge_delay: bool,
    /// glibc's `mmap` and trim thresholds fixed at 128 KiB.
    pub c_malloc_thresholds: bool,
}

/// Gives freed memory back to the system at once (see the module docs),
/// unless the environment already tunes the allocator in question.
pub fn tune_for_service() -> Tuned {
    let set = |name: &str| std::env::var_os(name).is_some();
    let purge_delay = !(set("MIMALLOC_PURGE_DELAY") || set("MIMALLOC_RESET_DELAY"));
    if purge_delay {
        // SAFETY: sets an integer option; mimalloc reads it when it next
        // considers purging. No Rust memory is involved.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
    Tuned {
        purge_delay,
        c_malloc_thresholds: c_malloc::tune(),
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod c_malloc {
    /// The `mmap` and trim thresholds: blocks from 128 KiB up are mapped
    /// and unmapped, and a heap top of 128 KiB free is trimmed.
    const THRESHOLD: libc::c_int = 128 * 1024;

    pub fn tune() -> bool {
        let tuned_by_user = std::env::var("GLIBC_TUNABLES")
            .is_ok_and(|t| t.contains("glibc.malloc."))
            || std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some()
            || std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_some();
        if tuned_by_user {
            return false;
        }
        // SAFETY: `mallopt` takes two integers and changes glibc's
        // allocator parameters; it touches no Rust memory. Setting either
        // threshold also turns off glibc's dynamic adjustment of both.
        let mmap = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, THRESHOLD) };
        let trim = unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, THRESHOLD) };
        mmap == 1 && trim == 1
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod c_malloc {
    /// Another C library: left as it is.
    pub fn tune() -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(o: libmimalloc_sys::mi_option_t) -> std::os::raw::c_long {
        // SAFETY: reads an integer option.
        unsafe { libmimalloc_sys::mi_option_get(o) }
    }

    /// The index is mimalloc's purge delay: its default (1 000 ms in v3's
    /// option table) between `deprecated_eager_commit_delay` (1) and `use_numa_nodes`
    /// (0); then the tuning sets it to 0 (unless the environment set it).
    #[test]
    fn the_purge_delay_option_is_found_and_set() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some()
            || std::env::var_os("MIMALLOC_RESET_DELAY").is_some()
        {
            eprintln!("MIMALLOC_PURGE_DELAY set: skipped");
            return;
        }
        assert_eq!(
            (
                option(MI_OPTION_PURGE_DELAY - 1),
                option(MI_OPTION_PURGE_DELAY),
                option(MI_OPTION_PURGE_DELAY + 1)
            ),
            (1, 1_000, 0)
        );
        let tuned = tune_for_service();
        assert!(tuned.purge_delay);
        assert_eq!(option(MI_OPTION_PURGE_DELAY), 0);
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if std::env::var_os("GLIBC_TUNABLES").is_none()
            && std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none()
            && std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_none()
        {
            assert!(tuned.c_malloc_thresholds, "mallopt accepted both");
        }
    }
}
