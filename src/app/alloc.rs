//! The binary's allocator: mimalloc, told to commit memory as it is used.
//!
//! mimalloc: a tool result's JSON is a tree of small allocations built and dropped on every call,
//! where glibc's malloc spent more time than the parser (see CHANGELOG, issue 14). By default it
//! commits its arenas up front, so the transient buffers of one large result stayed in the peak:
//! an audit of a 60 MiB result peaked at 272-339 MiB; with arenas committed as used (and the
//! other fixes of issue 14), 173-181 MiB. Freed memory is still kept for mimalloc's default
//! purge delay (10 ms in v2; 1000 ms in the v3.3.2 built here): giving it back at once cost allocation-heavy passes 10-20% in page faults and saved
//! only 5-10 MiB more (docs/engine.md, Speed).

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_e` of the mimalloc the `libmimalloc-sys` crate builds (`MI_MALLOC_VERSION` below):
/// the numbers move between mimalloc versions, so a test pins the version they were read from.
const MIMALLOC_VERSION: i32 = 30302;
const ARENA_EAGER_COMMIT: i32 = 4;

/// Commit arenas as they are used. Called first thing in `main`.
pub fn tune() {
    // SAFETY: setting an option is a plain store into mimalloc's option table, read when an
    // arena is made, so setting it after the allocator started is fine
    unsafe {
        // mimalloc's own environment variable still wins
        if libmimalloc_sys::mi_version() == MIMALLOC_VERSION
            && std::env::var_os("MIMALLOC_ARENA_EAGER_COMMIT").is_none()
        {
            libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new mimalloc may number its options differently: read them again from its
    /// `mimalloc.h` (`mi_option_arena_eager_commit`) and update.
    #[test]
    fn the_option_number_is_that_of_the_mimalloc_built() {
        // SAFETY: reading the version and options has no precondition
        unsafe {
            assert_eq!(libmimalloc_sys::mi_version(), MIMALLOC_VERSION);
            // the default of `arena_eager_commit` is 2 ("on overcommit systems"), of the
            // option before it (a deprecated one) and after it (`purge_decommits`) 0 and 1
            assert_eq!(libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT), 2);
            assert_eq!(libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT + 1), 1);
            tune();
            assert_eq!(libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT), 0);
        }
    }
}
