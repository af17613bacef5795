//! `pod-template-hash` and generated name suffixes.
//!
//! Shape of k8s.io/kubernetes `pkg/controller/controller_utils.go` (`ComputeHash`) and
//! k8s.io/apimachinery `util/rand` (`SafeEncodeString`) at v1.32: an FNV-32a hash of the pod
//! template (plus the collision count, little-endian) printed in decimal and mapped character by
//! character onto the vowel-free alphabet. Upstream hashes a Go-specific dump of the struct; we
//! hash the template's JSON, so the value differs from kube's for the same template but has the
//! same form (up to 10 characters of `bcdfghjklmnpqrstvwxz2456789`) and the same stability.

use k8s_openapi::api::core::v1::PodTemplateSpec;

const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn fnv32a(hash: u32, bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(hash, |h, b| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193))
}

/// Maps each character of `s` onto the safe alphabet.
pub fn safe_encode(s: &str) -> String {
    s.chars()
        .map(|c| ALPHANUMS[(c as usize) % ALPHANUMS.len()] as char)
        .collect()
}

/// The `pod-template-hash` of a template.
pub fn pod_template_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let json = serde_json::to_vec(template).expect("a pod template serializes");
    let mut hash = fnv32a(0x811c_9dc5, &json);
    if let Some(count) = collision_count {
        hash = fnv32a(hash, &(count as u32).to_le_bytes());
    }
    safe_encode(&hash.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stable_distinct_and_collision_sensitive() {
        let a: PodTemplateSpec = serde_json::from_value(
            json!({"spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}),
        )
        .expect("a template");
        let b: PodTemplateSpec = serde_json::from_value(
            json!({"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}),
        )
        .expect("a template");
        let h = pod_template_hash(&a, None);
        assert_eq!(h, pod_template_hash(&a, None));
        assert_ne!(h, pod_template_hash(&b, None));
        assert_ne!(h, pod_template_hash(&a, Some(1)));
        assert!(h.len() <= 10 && h.chars().all(|c| ALPHANUMS.contains(&(c as u8))));
    }
}
