//! Where OpenSM's `dlopen("libosmroute.so")` will find the plugin, and
//! which OpenSM version the plugin and the installed OpenSM carry. OpenSM
//! loads a plugin only if the plugin's version string equals its own.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const LIBRARY: &str = "libosmroute.so";

/// The file the dynamic loader resolves `libosmroute.so` to: the
/// directories of `LD_LIBRARY_PATH` first, then the loader's cache
/// (`ldconfig -p`), then the default directories.
pub fn resolve(ld_library_path: Option<&str>, ldconfig_cache: &str) -> Option<PathBuf> {
    let from_env = ld_library_path
        .into_iter()
        .flat_map(|p| p.split(':'))
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let from_cache = ldconfig_cache.lines().filter_map(|line| {
        let (name, path) = line.trim().split_once(" => ")?;
        (name.split_whitespace().next() == Some(LIBRARY))
            .then(|| PathBuf::from(path.trim()).parent().map(Path::to_path_buf))?
    });
    let defaults = ["/lib", "/usr/lib"].into_iter().map(PathBuf::from);
    from_env
        .chain(from_cache)
        .chain(defaults)
        .map(|d| d.join(LIBRARY))
        .find(|p| p.is_file())
}

/// The loader's cache as `ldconfig -p` prints it (empty if it cannot run).
pub fn ldconfig_cache() -> String {
    ["ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"]
        .iter()
        .find_map(|cmd| {
            Command::new(cmd)
                .arg("-p")
                .output()
                .ok()
                .filter(|o| o.status.success())
        })
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// The first "OpenSM X.Y.Z" string in a binary: the version a plugin was
/// built for (its OSM_VERSION), or the version of an OpenSM executable.
pub fn opensm_version_in(bytes: &[u8]) -> Option<String> {
    const MARK: &[u8] = b"OpenSM ";
    let mut from = 0;
    while let Some(at) = bytes[from..].windows(MARK.len()).position(|w| w == MARK) {
        let start = from + at + MARK.len();
        let digits = bytes[start..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b'.')
            .count();
        let version = &bytes[start..start + digits];
        if version.first().is_some_and(u8::is_ascii_digit)
            && version.iter().filter(|&&b| b == b'.').count() >= 1
        {
            return Some(format!(
                "OpenSM {}",
                String::from_utf8_lossy(version).trim_end_matches('.')
            ));
        }
        from = start;
    }
    None
}

/// The `opensm` executable on PATH (or /usr/sbin), if any.
pub fn opensm_executable() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(
            ["/usr/sbin", "/usr/local/sbin", "/sbin"]
                .into_iter()
                .map(PathBuf::from),
        )
        .map(|d| d.join("opensm"))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_version_string_among_other_text() {
        let blob = b"\0OpenSM version mismatch\0OpenSM %s\0OpenSM 3.3.23\0more";
        assert_eq!(opensm_version_in(blob).as_deref(), Some("OpenSM 3.3.23"));
        assert_eq!(opensm_version_in(b"OpenSM 3\0"), None);
        assert_eq!(opensm_version_in(b"nothing"), None);
    }

    #[test]
    fn resolves_through_the_environment_then_the_cache() {
        let dir = std::env::temp_dir().join(format!("osmroute-doctor-lib-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(LIBRARY), b"x").unwrap();
        let cache = format!(
            "\t{LIBRARY} (libc6,x86-64) => {}\n",
            dir.join(LIBRARY).display()
        );
        assert_eq!(resolve(None, &cache), Some(dir.join(LIBRARY)));
        assert_eq!(
            resolve(Some(dir.to_str().unwrap()), ""),
            Some(dir.join(LIBRARY))
        );
        // Neither names it: only the default directories remain.
        assert_eq!(
            resolve(Some("/nonexistent"), "\tlibother.so => /x/libother.so\n"),
            resolve(None, "")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
