//! Small file helpers for credentials: atomic writes with an explicit mode, private directories
//! and PEM encoding. Used by the PKI and the kubeconfig writer only.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::AuthError;

/// Mode for private keys and files that embed them (kubeconfig).
pub(crate) const SECRET_MODE: u32 = 0o600;
/// Mode for certificates, which are public.
pub(crate) const PUBLIC_MODE: u32 = 0o644;

/// Creates `dir` (and parents) with mode 0700 if it does not exist yet. An existing directory
/// keeps its permissions: the operator may have chosen them.
pub(crate) fn ensure_private_dir(dir: &Path) -> Result<(), AuthError> {
    if dir.is_dir() {
        return Ok(());
    }
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|source| AuthError::CreateDir {
            path: dir.to_path_buf(),
            source,
        })
}

/// Reads a UTF-8 file, returning `None` if it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<String>, AuthError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(AuthError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Writes `contents` to `path` with `mode`, atomically: readers see the old file or the new one,
/// never a partial key, and a secret never exists on disk with wider permissions.
pub(crate) fn write_atomic(path: &Path, contents: &[u8], mode: u32) -> Result<(), AuthError> {
    let err = |source| AuthError::Write {
        path: path.to_path_buf(),
        source,
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| err(std::io::Error::other("path has no file name")))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    // A leftover from a crash may have other permissions; mode only applies on creation.
    match fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(e)),
    }
    let write = || -> std::io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        // The umask may have narrowed the mode; public files should still be readable.
        file.set_permissions(fs::Permissions::from_mode(mode))?;
        file.write_all(contents)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        err(e)
    })
}

/// PEM-encodes `der` under `label` with the usual 64-column lines.
pub(crate) fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(chunk).expect("base64 output is ASCII"));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_sets_mode_and_replaces_content() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("secret.key");
        write_atomic(&path, b"one", SECRET_MODE).expect("first write");
        write_atomic(&path, b"two", SECRET_MODE).expect("second write");
        assert_eq!(fs::read(&path).expect("read"), b"two");
        let mode = fs::metadata(&path).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("secret.key")]);
    }

    #[test]
    fn pem_encode_round_trips_through_rustls_parser() {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let der: Vec<u8> = (0..=200u8).collect();
        let pem = pem_encode("CERTIFICATE", &der);
        assert!(pem.lines().all(|l| l.len() <= 64));
        let parsed = CertificateDer::from_pem_slice(pem.as_bytes()).expect("parse");
        assert_eq!(parsed.as_ref(), der.as_slice());
    }
}
