//! karmada-search's multi-cluster resource versions and continue tokens: what the global proxy
//! hands out as `resourceVersion` and `continue`, so that a list, a page after it and a watch
//! from it each resume every member where the client left it.
//!
//! A multi-cluster resource version is `base64url(JSON {cluster: member rv, ...})` without
//! padding, clusters in name order; `"0"` stays `"0"` (any version, for every member) and `""`
//! stays empty. A continue token is `base64url(JSON {"rv", "cluster", "continue"})`: the whole
//! list's version, the cluster to resume in and that cluster's own continue (empty: start that
//! cluster from the beginning). Undecodable strings read as empty, as in Karmada.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

/// Member resource versions by cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MultiVersion {
    versions: BTreeMap<String, String>,
    /// `"0"`: any version for every cluster.
    zero: bool,
}

impl MultiVersion {
    /// Decodes a version the proxy handed out (or a client's `"0"`).
    pub fn parse(text: &str) -> Self {
        match text {
            "" => Self::default(),
            "0" => Self {
                zero: true,
                ..Self::default()
            },
            _ => Self {
                versions: URL_SAFE_NO_PAD
                    .decode(text)
                    .ok()
                    .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                    .unwrap_or_default(),
                zero: false,
            },
        }
    }

    /// The member version to resume `cluster` from (`"0"` for a zero version; empty when the
    /// cluster is not in it).
    pub fn get(&self, cluster: &str) -> &str {
        if self.zero {
            return "0";
        }
        self.versions.get(cluster).map_or("", String::as_str)
    }

    /// Whether `cluster` has a version of its own.
    pub fn contains(&self, cluster: &str) -> bool {
        self.versions.contains_key(cluster)
    }

    /// Records `cluster` at `version`.
    pub fn set(&mut self, cluster: &str, version: String) {
        if version != "0" {
            self.zero = false;
        }
        self.versions.insert(cluster.to_owned(), version);
    }

    /// The `resourceVersion` string.
    pub fn encode(&self) -> String {
        if self.zero {
            return "0".into();
        }
        if self.versions.is_empty() {
            return String::new();
        }
        let json = serde_json::to_vec(&self.versions).expect("strings serialize");
        URL_SAFE_NO_PAD.encode(json)
    }

    /// The member version of `cluster` in a multi-cluster version an update carries; `None`
    /// when `text` is not one (then the object's version is left as it is).
    pub fn member_version(text: &str, cluster: &str) -> Option<String> {
        if text.is_empty() || text == "0" {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        let versions: BTreeMap<String, String> = serde_json::from_slice(&bytes).ok()?;
        Some(versions.get(cluster).cloned().unwrap_or_default())
    }
}

/// A continue token of the global proxy's lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultiContinue {
    /// The list's multi-cluster resource version.
    #[serde(default)]
    pub rv: String,
    /// The cluster to resume in.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cluster: String,
    /// That cluster's own continue token (empty: from its first object).
    #[serde(default, rename = "continue", skip_serializing_if = "String::is_empty")]
    pub continue_: String,
}

impl MultiContinue {
    /// Decodes a token (undecodable: empty).
    pub fn parse(text: &str) -> Self {
        if text.is_empty() {
            return Self::default();
        }
        URL_SAFE_NO_PAD
            .decode(text)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// The `continue` string: empty when there is nothing left.
    pub fn encode(&self) -> String {
        if self.cluster.is_empty() {
            return String::new();
        }
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).expect("strings serialize"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_round_trip_in_cluster_order() {
        let mut version = MultiVersion::default();
        version.set("member2", "7".into());
        version.set("member1", "42".into());
        let text = version.encode();
        let decoded = URL_SAFE_NO_PAD.decode(&text).unwrap();
        assert_eq!(decoded, br#"{"member1":"42","member2":"7"}"#);
        let parsed = MultiVersion::parse(&text);
        assert_eq!(parsed.get("member1"), "42");
        assert_eq!(parsed.get("member2"), "7");
        assert_eq!(parsed.get("member3"), "");
        assert!(!parsed.contains("member3"));
    }

    #[test]
    fn zero_and_empty_stay_as_they_are() {
        assert_eq!(MultiVersion::parse("0").encode(), "0");
        assert_eq!(MultiVersion::parse("0").get("any"), "0");
        assert_eq!(MultiVersion::parse("").encode(), "");
        assert_eq!(MultiVersion::parse("not base64 json!").encode(), "");
        let mut zero = MultiVersion::parse("0");
        zero.set("member1", "5".into());
        assert_eq!(zero.get("member1"), "5");
    }

    #[test]
    fn an_update_gets_its_member_version_back() {
        let mut version = MultiVersion::default();
        version.set("member1", "42".into());
        let text = version.encode();
        assert_eq!(
            MultiVersion::member_version(&text, "member1").as_deref(),
            Some("42")
        );
        assert_eq!(
            MultiVersion::member_version(&text, "member2").as_deref(),
            Some("")
        );
        assert_eq!(MultiVersion::member_version("42", "member1"), None);
        assert_eq!(MultiVersion::member_version("0", "member1"), None);
    }

    #[test]
    fn continue_tokens_round_trip_and_end_empty() {
        let token = MultiContinue {
            rv: "abc".into(),
            cluster: "member2".into(),
            continue_: String::new(),
        };
        let text = token.encode();
        assert_eq!(MultiContinue::parse(&text), token);
        let json = URL_SAFE_NO_PAD.decode(&text).unwrap();
        assert_eq!(json, br#"{"rv":"abc","cluster":"member2"}"#);
        assert_eq!(MultiContinue::default().encode(), "");
        assert_eq!(MultiContinue::parse("%%%"), MultiContinue::default());
    }
}
