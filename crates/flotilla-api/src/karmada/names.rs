//! Karmada's naming conventions: binding names, Work names (FNV-1a 32 + the SafeEncode
//! alphabet) and execution namespaces. Names must be byte-identical to Karmada's so existing
//! objects are adopted.

/// Prefix of the per-cluster execution namespaces.
pub const EXECUTION_SPACE_PREFIX: &str = "karmada-es-";

/// Alphabet of apimachinery's `rand.SafeEncodeString` (no vowels, no confusable digits).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Errors of the naming helpers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// A namespace that is not an execution namespace.
    #[error("the execution space name is in wrong format")]
    NotExecutionSpace,
}

/// FNV-1a, 32 bits.
pub fn fnv1a_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// apimachinery's `rand.SafeEncodeString`: each character mapped into [`SAFE_ALPHABET`].
pub fn safe_encode(s: &str) -> String {
    s.chars()
        .map(|c| char::from(SAFE_ALPHABET[(c as usize) % SAFE_ALPHABET.len()]))
        .collect()
}

/// `<name>-<kind>` lower-cased, with `:` in the name replaced by `.`.
pub fn binding_name(kind: &str, name: &str) -> String {
    format!("{}-{}", name.replace(':', "."), kind).to_lowercase()
}

/// `<name>-<hash>` where the hash is the safe-encoded decimal FNV-1a 32 of
/// `[<namespace>-]<name>-<kind>` (lower-cased, `:` → `.`).
pub fn work_name(kind: &str, name: &str, namespace: &str) -> String {
    let name = name.replace(':', ".").to_lowercase();
    let key = if namespace.is_empty() {
        format!("{name}-{kind}")
    } else {
        format!("{namespace}-{name}-{kind}")
    }
    .to_lowercase();
    let hash = fnv1a_32(key.as_bytes());
    format!("{name}-{}", safe_encode(&hash.to_string()))
}

/// `karmada-es-<cluster>`.
pub fn execution_space_name(cluster: &str) -> String {
    format!("{EXECUTION_SPACE_PREFIX}{cluster}")
}

/// The cluster of an execution namespace.
pub fn cluster_name(execution_space: &str) -> Result<&str, NameError> {
    execution_space
        .strip_prefix(EXECUTION_SPACE_PREFIX)
        .ok_or(NameError::NotExecutionSpace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_names_match_karmada() {
        assert_eq!(binding_name("Pods", "pod"), "pod-pods");
        assert_eq!(
            binding_name("Role", "system:controller:tom"),
            "system.controller.tom-role"
        );
        assert_eq!(
            binding_name("ClusterRole", "system::tom"),
            "system..tom-clusterrole"
        );
    }

    #[test]
    fn work_names_match_karmada() {
        assert_eq!(
            work_name("Deployment", "nginx", "default"),
            "nginx-687f7fb96f"
        );
        assert_eq!(work_name("Namespace", "foo", ""), "foo-5dbdc7b59c");
    }

    #[test]
    fn execution_spaces_round_trip() {
        assert_eq!(
            execution_space_name("member-cluster-normal"),
            "karmada-es-member-cluster-normal"
        );
        assert_eq!(cluster_name("karmada-es-member1"), Ok("member1"));
        assert_eq!(cluster_name(""), Err(NameError::NotExecutionSpace));
        assert_eq!(cluster_name("member1"), Err(NameError::NotExecutionSpace));
    }

    #[test]
    fn fnv1a_32_known_vectors() {
        assert_eq!(fnv1a_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a_32(b"a"), 0xe40c_292c);
    }
}
