//! Small helpers every command shares: atomic file writes and the removal of a temporary
//! file when a run is interrupted. (Results are printed by [`crate::report`].)
pub use edgeflow_flow::write_atomic;

/// The temporary file a long write fills (`sim --vcd`), removed if the user interrupts the
/// run (Ctrl-C, SIGTERM), so nothing half-written is left beside the output.
static INTERRUPTED_TEMP: std::sync::atomic::AtomicPtr<libc::c_char> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

extern "C" fn remove_temp_and_exit(sig: libc::c_int) {
    let p = INTERRUPTED_TEMP.load(std::sync::atomic::Ordering::SeqCst);
    // only async-signal-safe calls here: unlink, then die of the same signal
    unsafe {
        if !p.is_null() {
            libc::unlink(p);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Remove `tmp` if the process is interrupted before `forget_on_interrupt`.
pub fn remove_on_interrupt(tmp: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(tmp.as_os_str().as_bytes()) else {
        return;
    };
    INTERRUPTED_TEMP.store(c.into_raw(), std::sync::atomic::Ordering::SeqCst);
    let handler = remove_temp_and_exit as extern "C" fn(libc::c_int) as libc::sighandler_t;
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

pub fn forget_on_interrupt() {
    let p = INTERRUPTED_TEMP.swap(std::ptr::null_mut(), std::sync::atomic::Ordering::SeqCst);
    if !p.is_null() {
        drop(unsafe { std::ffi::CString::from_raw(p) });
    }
}
