//! The binary's allocator: mimalloc, told to give freed memory back at once.
//!
//! mimalloc: a tool result's JSON is a tree of small allocations built and dropped on every call,
//! where glibc's malloc spent more time than the parser (see CHANGELOG, issue 14). By default it
//! keeps freed memory resident for a while and commits its arenas up front, so the transient
//! buffers of one large result (the line read from a server, serde's scratch for unescaping a
//! 60 MB string) stayed in the peak: an audit of a 60 MB result peaked at 285-330 MB, and
//! 190-215 MB with freed memory purged at once and arenas committed as used; the demo audit
//! 125 -> 52 MB. Replays and counts took no longer (README, Speed).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_e` of the mimalloc the `libmimalloc-sys` crate builds (`MI_MALLOC_VERSION` below):
/// the numbers move between mimalloc versions, so a test pins the version they were read from.
const MIMALLOC_VERSION: i32 = 30302;
const PURGE_DELAY: i32 = 15;
const ARENA_EAGER_COMMIT: i32 = 4;

/// Purge freed memory at once and commit arenas as they are used. Called first thing in `main`.
pub fn tune() {
    // SAFETY: setting an option is a plain store into mimalloc's option table; both are read at
    // each use, so setting them after the allocator started is fine
    unsafe {
        if libmimalloc_sys::mi_version() == MIMALLOC_VERSION {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
            libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new mimalloc may number its options differently: read them again from its
    /// `mimalloc.h` (`mi_option_purge_delay`, `mi_option_arena_eager_commit`) and update.
    #[test]
    fn the_option_numbers_are_those_of_the_mimalloc_built() {
        // SAFETY: reading the version and options has no precondition
        unsafe {
            assert_eq!(libmimalloc_sys::mi_version(), MIMALLOC_VERSION);
            tune();
            assert_eq!(libmimalloc_sys::mi_option_get(PURGE_DELAY), 0);
            assert_eq!(libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT), 0);
            // the default of the option after purge_delay (use_numa_nodes) is untouched
            assert_eq!(libmimalloc_sys::mi_option_get(PURGE_DELAY + 1), 0);
        }
    }
}
