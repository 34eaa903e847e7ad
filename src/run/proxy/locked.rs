//! A mutex taken whatever became of its last holder: the proxy's state stays usable after a
//! task that held a lock panicked (what it guards is valid between statements).

pub(super) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
