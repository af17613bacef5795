//! Hashes of JSON documents, fed to the hasher as they serialize (no string is built): the
//! controllers compare them to tell a real change from a repeat.

use std::hash::Hasher as _;

/// A hash of `value`'s JSON.
pub(crate) fn hash_of(value: &impl serde::Serialize) -> u64 {
    let mut hasher = HashWriter(std::collections::hash_map::DefaultHasher::new());
    // Writing into a hasher cannot fail; a value that cannot serialize hashes what was written.
    let _ = serde_json::to_writer(&mut hasher, value);
    hasher.0.finish()
}

/// Feeds serialized bytes straight into a hasher.
struct HashWriter(std::collections::hash_map::DefaultHasher);

impl std::io::Write for HashWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
