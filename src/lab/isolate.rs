//! Keeping the lab on loopback: the process moves into a network namespace of its own where
//! only `lo` exists (as root a plain network namespace, otherwise inside a user namespace that
//! maps the user to itself), so neither a client nor the servers it starts can reach anything
//! but 127.0.0.1, whatever they try. It must run while the process has one thread (before the
//! async runtime starts): every thread and child made afterwards inherits the namespace.

use super::LabError;

/// How the lab is kept on loopback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// A network namespace with only loopback: nothing can leave the machine.
    Namespace,
    /// No namespace (`--no-isolation`): only the adapters' URLs are checked.
    UrlsOnly,
}

/// Move this process into a network namespace with only loopback, up.
pub fn loopback_only() -> Result<Isolation, LabError> {
    let failed = |step: &str| LabError::Isolation {
        step: step.into(),
        source: std::io::Error::last_os_error(),
    };
    // SAFETY: geteuid/getegid only read the process's ids.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        // SAFETY: unshare changes only this process's namespaces.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            return Err(failed("unshare(CLONE_NEWNET)"));
        }
    } else {
        // SAFETY: as above; the process has one thread (the caller's promise).
        if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) } != 0 {
            return Err(failed("unshare(CLONE_NEWUSER | CLONE_NEWNET)"));
        }
        let write = |path: &str, text: String| {
            std::fs::write(path, text).map_err(|source| LabError::Isolation {
                step: format!("writing {path}"),
                source,
            })
        };
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    loopback_up().map_err(|source| LabError::Isolation {
        step: "bringing lo up".into(),
        source,
    })?;
    Ok(Isolation::Namespace)
}

/// Set the `lo` interface up (SIOCSIFFLAGS), as `ip link set lo up` does.
fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a datagram socket used only for the two ioctls below, closed at the end.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: ifreq is plain data; all zeroes is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: the ioctls read and write `req`, which outlives them.
    let result = unsafe {
        if libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req) < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            if libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &req) < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(())
            }
        }
    };
    // SAFETY: fd is the socket opened above.
    unsafe { libc::close(fd) };
    result
}
