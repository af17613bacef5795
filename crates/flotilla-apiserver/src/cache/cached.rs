//! A cached object and its labels: the store's bytes, served with `resourceVersion` spliced in,
//! and what list and watch filters look at.

use bytes::Bytes;
use flotilla_store::Revision;

use super::served;
use crate::object;

/// One object as served: its JSON with `resourceVersion` set, and what filters look at.
///
/// The served JSON is normally not kept: the object holds the stored bytes (the very
/// allocation the store and its change log hold, not a copy) and where `resourceVersion`
/// goes, and writes the served form on demand ([`CachedObject::json`]). A cluster's objects
/// are therefore in memory once, not once in the store and once more in the cache.
#[derive(Debug)]
pub struct CachedObject {
    pub key: Bytes,
    body: Body,
    pub revision: Revision,
    pub labels: Labels,
}

#[derive(Debug)]
enum Body {
    /// Stored bytes; `"resourceVersion":"<revision>"` (preceded by a comma unless metadata
    /// is empty) goes in at byte `at` of their JSON, just before metadata's closing brace.
    /// `expanded` is 0 when the bytes are the JSON, else they are in the compact form
    /// ([`object::compact`]) of that many bytes of JSON, expanded whenever served.
    Spliced {
        stored: Bytes,
        at: u32,
        comma: bool,
        expanded: u32,
    },
    /// The served JSON itself (objects the splice does not handle).
    Encoded(Bytes),
}

impl CachedObject {
    /// The served form of stored bytes whose splice point is known (`at`: metadata's closing
    /// brace; `comma`: metadata has members before it). No labels: for a write's response.
    pub(crate) fn spliced(stored: Bytes, at: u32, comma: bool, revision: Revision) -> Self {
        CachedObject {
            key: Bytes::new(),
            body: Body::Spliced {
                stored,
                at,
                comma,
                expanded: 0,
            },
            revision,
            labels: Labels::default(),
        }
    }

    /// Builds the served form of stored bytes at `revision`.
    pub fn from_stored(key: Bytes, bytes: &Bytes, revision: Revision) -> Option<Self> {
        let json = match object::compact::expand(bytes) {
            Ok(json) => json,
            Err(error) => {
                tracing::error!(key = %String::from_utf8_lossy(&key), %error, "skipping undecodable object");
                return None;
            }
        };
        if let Some(splice) = served::locate(&json)
            && let Ok(at) = u32::try_from(splice.at)
            && let Ok(expanded) = u32::try_from(match json {
                std::borrow::Cow::Borrowed(_) => 0,
                std::borrow::Cow::Owned(ref json) => json.len(),
            })
        {
            return Some(CachedObject {
                key,
                body: Body::Spliced {
                    stored: bytes.clone(),
                    at,
                    comma: splice.comma,
                    expanded,
                },
                revision,
                labels: splice.labels,
            });
        }
        let value = match object::decode_at(&json, revision) {
            Ok(value) => value,
            Err(error) => {
                tracing::error!(key = %String::from_utf8_lossy(&key), %error, "skipping undecodable object");
                return None;
            }
        };
        let labels = Labels::of(&value);
        let json = serde_json::to_vec(&value).ok()?.into();
        Some(CachedObject {
            key,
            body: Body::Encoded(json),
            revision,
            labels,
        })
    }

    /// The bytes the store holds for this object at `revision`, when kept as they are.
    pub(crate) fn stored(&self) -> Option<&Bytes> {
        match &self.body {
            Body::Spliced { stored, .. } => Some(stored),
            Body::Encoded(_) => None,
        }
    }

    /// The served JSON (`resourceVersion` set).
    pub fn json(&self) -> Bytes {
        match &self.body {
            Body::Encoded(json) => json.clone(),
            Body::Spliced { .. } => {
                let mut out = Vec::with_capacity(self.json_len());
                self.write_json(&mut out);
                out.into()
            }
        }
    }

    /// Appends the served JSON to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        match &self.body {
            Body::Encoded(json) => out.extend_from_slice(json),
            Body::Spliced {
                stored, at, comma, ..
            } => {
                let stored = self.stored_json(stored);
                let at = *at as usize;
                out.extend_from_slice(&stored[..at]);
                if *comma {
                    out.push(b',');
                }
                out.extend_from_slice(b"\"resourceVersion\":\"");
                out.extend_from_slice(self.revision.to_string().as_bytes());
                out.push(b'"');
                out.extend_from_slice(&stored[at..]);
            }
        }
    }

    /// The exact length of [`CachedObject::json`].
    pub fn served_len(&self) -> usize {
        match &self.body {
            Body::Encoded(json) => json.len(),
            Body::Spliced {
                stored,
                comma,
                expanded,
                ..
            } => {
                let digits = self.revision.checked_ilog10().unwrap_or(0) as usize + 1;
                let json = if *expanded == 0 {
                    stored.len()
                } else {
                    *expanded as usize
                };
                json + usize::from(*comma) + "\"resourceVersion\":\"\"".len() + digits
            }
        }
    }

    /// The length of [`CachedObject::json`] (a size hint).
    pub fn json_len(&self) -> usize {
        match &self.body {
            Body::Encoded(json) => json.len(),
            Body::Spliced {
                stored, expanded, ..
            } => {
                if *expanded == 0 {
                    stored.len() + 40
                } else {
                    *expanded as usize + 40
                }
            }
        }
    }

    /// The object's JSON, possibly without `resourceVersion`: for readers that parse it and do
    /// not look at the version (field selectors, the garbage collector, RBAC).
    pub fn raw(&self) -> std::borrow::Cow<'_, [u8]> {
        match &self.body {
            Body::Encoded(json) => std::borrow::Cow::Borrowed(json),
            Body::Spliced { stored, .. } => self.stored_json(stored),
        }
    }

    /// The JSON of this object's stored bytes (expanded if they are compact).
    fn stored_json<'a>(&self, stored: &'a Bytes) -> std::borrow::Cow<'a, [u8]> {
        object::compact::expand(stored).unwrap_or_else(|error| {
            // `from_stored` expanded these very bytes, and dictionaries are never dropped.
            panic!(
                "cached object {}: {error}",
                String::from_utf8_lossy(&self.key)
            )
        })
    }

    pub fn value(&self) -> serde_json::Value {
        match &self.body {
            Body::Encoded(json) => {
                serde_json::from_slice(json).expect("cached JSON was serialized by us")
            }
            Body::Spliced { stored, .. } => {
                object::decode_at(stored, self.revision).expect("spliced objects are JSON")
            }
        }
    }

    /// Whether `metadata.deletionTimestamp` is set.
    pub fn is_terminating(&self) -> bool {
        #[derive(serde::Deserialize)]
        struct Object {
            #[serde(default)]
            metadata: Metadata,
        }
        #[derive(Default, serde::Deserialize)]
        struct Metadata {
            #[serde(rename = "deletionTimestamp")]
            deletion_timestamp: Option<serde::de::IgnoredAny>,
        }
        let raw = self.raw();
        // The bracket scan first (no decoding: this runs before every create in a namespace);
        // serde for what it refuses.
        if let Some((_, _, [found])) =
            object::scan::pick_nested(&raw, [], "metadata", ["deletionTimestamp"])
        {
            return found.is_some_and(|span| &raw[span] != b"null");
        }
        serde_json::from_slice::<Object>(&raw)
            .is_ok_and(|object| object.metadata.deletion_timestamp.is_some())
    }
}

/// `metadata.labels` of a cached object in one allocation (none when empty): each label as
/// its key's length, its value's length (both `u32`, native order), then both strings. A
/// `BTreeMap<String, String>` costs a 540-byte node plus two strings per label, which for
/// 100,000 objects is about 60 MiB of the cache.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Labels(Box<[u8]>);

impl Labels {
    /// The string labels of an object (other values are ignored, as everywhere else).
    pub fn of(object: &serde_json::Value) -> Self {
        let Some(map) = object
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(serde_json::Value::as_object)
        else {
            return Labels::default();
        };
        Self::from_pairs(
            map.iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))),
        )
    }

    pub(super) fn from_pairs<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Self {
        let size = pairs.clone().map(|(k, v)| 8 + k.len() + v.len()).sum();
        let mut out = Vec::with_capacity(size);
        for (key, value) in pairs {
            let (Ok(key_len), Ok(value_len)) =
                (u32::try_from(key.len()), u32::try_from(value.len()))
            else {
                continue;
            };
            out.extend_from_slice(&key_len.to_ne_bytes());
            out.extend_from_slice(&value_len.to_ne_bytes());
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(value.as_bytes());
        }
        Labels(out.into_boxed_slice())
    }

    /// Every label, in the order of the object's `metadata.labels`.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut rest = &self.0[..];
        std::iter::from_fn(move || {
            let (header, tail) = rest.split_first_chunk::<8>()?;
            let (key_len, value_len) = header.split_at(4);
            let key_len = u32::from_ne_bytes(key_len.try_into().ok()?) as usize;
            let value_len = u32::from_ne_bytes(value_len.try_into().ok()?) as usize;
            let (key, tail) = tail.split_at_checked(key_len)?;
            let (value, tail) = tail.split_at_checked(value_len)?;
            rest = tail;
            // Written from `&str`s by `from_pairs`.
            Some((
                std::str::from_utf8(key).ok()?,
                std::str::from_utf8(value).ok()?,
            ))
        })
    }

    /// The value of label `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Labels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}
