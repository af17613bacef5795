//! Parsing request paths and query parameters into what the handlers need.

use std::collections::BTreeMap;

use crate::error::ApiError;

/// What a request path names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `/api` or `/apis`.
    Root { legacy: bool },
    /// `/apis/<group>`.
    Group { group: String },
    /// `/api/v1` or `/apis/<group>/<version>`.
    GroupVersion { group: String, version: String },
    /// A resource collection or object, possibly with a subresource.
    Resource(ResourcePath),
}

/// `/apis/<group>/<version>[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub resource: String,
    pub name: Option<String>,
    pub subresource: Option<String>,
}

/// Parses a request path; `None` when it is not an API path.
pub fn parse_path(path: &str) -> Option<Target> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["api"] => return Some(Target::Root { legacy: true }),
        ["apis"] => return Some(Target::Root { legacy: false }),
        ["apis", group] => {
            return Some(Target::Group {
                group: (*group).to_owned(),
            });
        }
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    if rest.iter().any(|s| s.is_empty()) {
        return None;
    }
    let owned = |s: &&str| (*s).to_owned();
    let mut path = ResourcePath {
        group: group.to_owned(),
        version: version.to_owned(),
        namespace: None,
        resource: String::new(),
        name: None,
        subresource: None,
    };
    match rest {
        [] => {
            return Some(Target::GroupVersion {
                group: group.to_owned(),
                version: version.to_owned(),
            });
        }
        [resource] => path.resource = owned(resource),
        ["namespaces", name, sub] if matches!(*sub, "status" | "finalize") => {
            path.resource = "namespaces".into();
            path.name = Some(owned(name));
            path.subresource = Some(owned(sub));
        }
        ["namespaces", ns, resource, tail @ ..] => {
            path.namespace = Some(owned(ns));
            path.resource = owned(resource);
            match tail {
                [] => {}
                [name] => path.name = Some(owned(name)),
                [name, sub] => {
                    path.name = Some(owned(name));
                    path.subresource = Some(owned(sub));
                }
                _ => return None,
            }
        }
        [resource, name] => {
            path.resource = owned(resource);
            path.name = Some(owned(name));
        }
        [resource, name, sub] => {
            path.resource = owned(resource);
            path.name = Some(owned(name));
            path.subresource = Some(owned(sub));
        }
        _ => return None,
    }
    Some(Target::Resource(path))
}

/// Decoded query parameters. Unknown parameters are kept and ignored, as kube-apiserver does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    params: BTreeMap<String, String>,
}

impl Query {
    pub fn parse(query: Option<&str>) -> Self {
        let mut params = BTreeMap::new();
        for (key, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            if !key.is_empty() {
                params.insert(key.into_owned(), value.into_owned());
            }
        }
        Query { params }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }

    /// A boolean parameter (`true`/`1`); absent or empty is false.
    pub fn flag(&self, key: &str) -> Result<bool, ApiError> {
        match self.get(key) {
            None | Some("") | Some("false") | Some("0") => Ok(false),
            Some("true") | Some("1") => Ok(true),
            Some(other) => Err(ApiError::bad_request(format!(
                "invalid value {other:?} for query parameter {key}: expected true or false"
            ))),
        }
    }

    /// An integer parameter.
    pub fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some(value) => value.parse().map(Some).map_err(|_| {
                ApiError::bad_request(format!(
                    "invalid value {value:?} for query parameter {key}: expected an integer"
                ))
            }),
        }
    }

    /// `dryRun=All`; any other value is refused as kube-apiserver does.
    pub fn dry_run(&self) -> Result<bool, ApiError> {
        match self.get("dryRun") {
            None | Some("") => Ok(false),
            Some("All") => Ok(true),
            Some(other) => Err(ApiError::bad_request(format!(
                "Invalid dry run value: {other:?}: valid values are \"All\""
            ))),
        }
    }

    /// `fieldValidation`: Strict, Warn (the default for unset) or Ignore.
    pub fn field_validation(&self) -> Result<FieldValidation, ApiError> {
        match self.get("fieldValidation") {
            None | Some("") | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\", got {other:?}"
            ))),
        }
    }
}

/// How unknown and duplicate fields in a request body are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    Warn,
    Strict,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(path: &str) -> ResourcePath {
        match parse_path(path) {
            Some(Target::Resource(r)) => r,
            other => panic!("{path}: {other:?}"),
        }
    }

    #[test]
    fn parses_every_path_shape() {
        assert_eq!(parse_path("/api"), Some(Target::Root { legacy: true }));
        assert_eq!(parse_path("/apis/"), Some(Target::Root { legacy: false }));
        assert_eq!(
            parse_path("/apis/apps/v1"),
            Some(Target::GroupVersion {
                group: "apps".into(),
                version: "v1".into()
            })
        );
        let r = resource("/apis/apps/v1/namespaces/default/deployments/web/scale");
        assert_eq!(r.group, "apps");
        assert_eq!(r.namespace.as_deref(), Some("default"));
        assert_eq!(r.resource, "deployments");
        assert_eq!(r.name.as_deref(), Some("web"));
        assert_eq!(r.subresource.as_deref(), Some("scale"));
        let ns = resource("/api/v1/namespaces/foo");
        assert_eq!(
            (ns.resource.as_str(), ns.name.as_deref()),
            ("namespaces", Some("foo"))
        );
        let ns = resource("/api/v1/namespaces/foo/status");
        assert_eq!(ns.subresource.as_deref(), Some("status"));
        assert_eq!(ns.namespace, None);
        let pods = resource("/api/v1/namespaces/foo/pods");
        assert_eq!((pods.namespace.as_deref(), pods.name), (Some("foo"), None));
        let all = resource("/apis/apps/v1/deployments");
        assert_eq!((all.namespace, all.name), (None, None));
        assert_eq!(parse_path("/healthz"), None);
        assert_eq!(parse_path("/api/v1/namespaces/a/pods/b/c/d"), None);
    }

    #[test]
    fn query_tolerates_an_empty_first_parameter() {
        let q = Query::parse(Some("&limit=500&labelSelector=app%3Dweb&watch=true"));
        assert_eq!(q.int("limit").expect("int"), Some(500));
        assert_eq!(q.get("labelSelector"), Some("app=web"));
        assert!(q.flag("watch").expect("flag"));
        assert!(Query::parse(Some("limit=x")).int("limit").is_err());
        assert!(Query::parse(Some("dryRun=Some")).dry_run().is_err());
    }
}
