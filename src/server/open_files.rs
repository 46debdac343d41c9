//! The open-file limit: every open tab is a socket.

/// Descriptors kept back from the tabs: the listeners, the event listener,
/// logs, the SQLite files and whatever else a request opens. The database
/// pool's connections are added to it.
const RESERVED_FILES: u64 = 64;

/// The open-file limit `baton serve` runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFiles {
    /// The soft limit in force now.
    pub limit: u64,
    /// The soft limit the process was started with.
    pub started_with: u64,
    /// Open tabs that fit: one socket each, after the reserve.
    pub tabs: u64,
}

/// Raises the soft open-file limit to the hard one. Every open tab is a
/// socket, and the usual soft limit (1,024) would cap an instance at about a
/// thousand tabs; the hard limit is what the administrator allows.
#[cfg(unix)]
pub fn raise_open_file_limit(pool_size: u32) -> std::io::Result<OpenFiles> {
    use rlimit::Resource;
    let (started_with, hard) = Resource::NOFILE.get()?;
    if started_with < hard {
        Resource::NOFILE.set(hard, hard)?;
    }
    let limit = Resource::NOFILE.get()?.0;
    let reserve = RESERVED_FILES + u64::from(pool_size);
    Ok(OpenFiles {
        limit,
        started_with,
        tabs: limit.saturating_sub(reserve),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        let (_, hard) = rlimit::Resource::NOFILE.get().expect("getrlimit");
        let files = raise_open_file_limit(16).expect("raise the open-file limit");
        let (soft, _) = rlimit::Resource::NOFILE.get().expect("getrlimit");
        assert_eq!(soft, hard);
        assert_eq!(files.limit, hard);
        assert!(files.started_with <= hard);
        assert_eq!(files.tabs, hard.saturating_sub(RESERVED_FILES + 16));
    }
}
