//! Discovery documents: aggregated (`apidiscovery.k8s.io/v2`) and legacy (`APIVersions`,
//! `APIGroupList`, `APIGroup`, `APIResourceList`), built from the catalog plus the create-only
//! review resources of `authentication.k8s.io` and `authorization.k8s.io`, which are served by
//! [`crate::auth::endpoints`] and stored nowhere, so the catalog does not hold them.

use serde_json::{Value, json};

use crate::catalog::{Catalog, ResourceInfo};

/// The aggregated discovery versions served: `v2` (Kubernetes ≥ 1.30) and `v2beta1` (what
/// kubectl 1.26–1.29 ask for; the same document under another apiVersion).
pub const AGGREGATED_VERSIONS: &[&str] = &["v2", "v2beta1"];

/// The content type that tells client-go the body is aggregated discovery of `version`.
pub fn aggregated_content_type(version: &str) -> String {
    format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList")
}

/// The aggregated discovery version the client prefers, if it asked for one: the first entry
/// of its Accept header that names one we serve.
pub fn wants_aggregated(accept: &str) -> Option<&'static str> {
    accept.split(',').find_map(|part| {
        let part = part.replace(' ', "");
        if !(part.contains("g=apidiscovery.k8s.io") && part.contains("as=APIGroupDiscoveryList")) {
            return None;
        }
        AGGREGATED_VERSIONS
            .iter()
            .copied()
            .find(|v| part.split(';').any(|p| p == format!("v={v}")))
    })
}

/// A resource that is not a stored kind: the identity reviews, which only accept `create`.
struct Review {
    group: &'static str,
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
}

/// The review resources kube-apiserver 1.32 serves, all in version `v1` with the single verb
/// `create` (`pkg/registry/authentication` and `pkg/registry/authorization` storage).
const REVIEWS: &[Review] = &[
    Review {
        group: "authentication.k8s.io",
        plural: "selfsubjectreviews",
        singular: "selfsubjectreview",
        kind: "SelfSubjectReview",
        namespaced: false,
    },
    Review {
        group: "authentication.k8s.io",
        plural: "tokenreviews",
        singular: "tokenreview",
        kind: "TokenReview",
        namespaced: false,
    },
    Review {
        group: "authorization.k8s.io",
        plural: "localsubjectaccessreviews",
        singular: "localsubjectaccessreview",
        kind: "LocalSubjectAccessReview",
        namespaced: true,
    },
    Review {
        group: "authorization.k8s.io",
        plural: "selfsubjectaccessreviews",
        singular: "selfsubjectaccessreview",
        kind: "SelfSubjectAccessReview",
        namespaced: false,
    },
    Review {
        group: "authorization.k8s.io",
        plural: "selfsubjectrulesreviews",
        singular: "selfsubjectrulesreview",
        kind: "SelfSubjectRulesReview",
        namespaced: false,
    },
    Review {
        group: "authorization.k8s.io",
        plural: "subjectaccessreviews",
        singular: "subjectaccessreview",
        kind: "SubjectAccessReview",
        namespaced: false,
    },
];

/// The version every review resource is served in.
const REVIEW_VERSION: &str = "v1";

fn reviews_of<'a>(group: &'a str, version: &'a str) -> impl Iterator<Item = &'static Review> + 'a {
    REVIEWS
        .iter()
        .filter(move |r| r.group == group && version == REVIEW_VERSION)
}

/// The catalog's groups and the review groups, each with its versions.
fn all_groups(catalog: &Catalog) -> Vec<(String, Vec<String>)> {
    let mut groups = catalog.groups();
    for review in REVIEWS {
        match groups.iter_mut().find(|(name, _)| name == review.group) {
            Some((_, versions)) if versions.iter().any(|v| v == REVIEW_VERSION) => {}
            Some((_, versions)) => versions.insert(0, REVIEW_VERSION.to_owned()),
            None => groups.push((review.group.to_owned(), vec![REVIEW_VERSION.to_owned()])),
        }
    }
    groups
}

/// Whether `serviceaccounts/token` (TokenRequest) hangs off this resource.
fn has_token_subresource(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.version == "v1" && info.plural == "serviceaccounts"
}

/// Whether `pods/exec` and `pods/log` hang off this resource.
fn is_core_pods(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.version == "v1" && info.plural == "pods"
}

/// Group order: the core group first, then the built-in groups as kube-apiserver orders them,
/// then everything else by name.
fn ordered_groups(catalog: &Catalog) -> Vec<(String, Vec<String>)> {
    const PRIORITY: &[&str] = &[
        "",
        "apps",
        "events.k8s.io",
        "authentication.k8s.io",
        "authorization.k8s.io",
        "autoscaling",
        "batch",
        "networking.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "apiextensions.k8s.io",
    ];
    let mut groups = all_groups(catalog);
    groups.sort_by_key(|(name, _)| {
        let rank = PRIORITY
            .iter()
            .position(|p| p == name)
            .unwrap_or(PRIORITY.len());
        (rank, name.clone())
    });
    groups
}

fn aggregated_resource(info: &ResourceInfo) -> Value {
    let mut resource = json!({
        "resource": info.plural,
        "responseKind": {"group": info.group, "version": info.version, "kind": info.kind},
        "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": info.singular,
        "verbs": info.verbs(),
    });
    if !info.short_names.is_empty() {
        resource["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        resource["categories"] = json!(info.categories);
    }
    let mut subresources = Vec::new();
    if info.status {
        subresources.push(json!({
            "subresource": "status",
            "responseKind": {"group": info.group, "version": info.version, "kind": info.kind},
            "verbs": ["get", "patch", "update"],
        }));
    }
    if info.scale.is_some() {
        subresources.push(json!({
            "subresource": "scale",
            "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "verbs": ["get", "patch", "update"],
        }));
    }
    if is_core_pods(info) {
        subresources.push(json!({
            "subresource": "exec",
            "responseKind": {"group": "", "version": "v1", "kind": "PodExecOptions"},
            "verbs": ["create", "get"],
        }));
        subresources.push(json!({
            "subresource": "log",
            "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
            "verbs": ["get"],
        }));
    }
    if crate::certificates::is_csr(info) {
        subresources.push(json!({
            "subresource": "approval",
            "responseKind": {"group": info.group, "version": info.version, "kind": info.kind},
            "verbs": ["get", "patch", "update"],
        }));
    }
    if has_token_subresource(info) {
        subresources.push(json!({
            "subresource": "token",
            "responseKind": {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"},
            "verbs": ["create"],
        }));
    }
    if !subresources.is_empty() {
        resource["subresources"] = Value::Array(subresources);
    }
    resource
}

/// `APIGroupDiscoveryList` for `/api` (`legacy`) or `/apis`, as `apidiscovery.k8s.io/<version>`.
pub fn aggregated(catalog: &Catalog, legacy: bool, version: &str) -> Value {
    let items: Vec<Value> = ordered_groups(catalog)
        .into_iter()
        .filter(|(group, _)| group.is_empty() == legacy)
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| {
                    let mut resources: Vec<Value> = catalog
                        .resources(&group, version)
                        .iter()
                        .map(|info| aggregated_resource(info))
                        .collect();
                    resources.extend(reviews_of(&group, version).map(|review| {
                        json!({
                            "resource": review.plural,
                            "responseKind": {"group": review.group, "version": REVIEW_VERSION, "kind": review.kind},
                            "scope": if review.namespaced { "Namespaced" } else { "Cluster" },
                            "singularResource": review.singular,
                            "verbs": ["create"],
                        })
                    }));
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": {"name": group, "creationTimestamp": null}, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {},
        "items": items,
    })
}

/// `APIVersions` for `/api`.
pub fn api_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    })
}

fn group_doc(group: &str, versions: &[String]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

/// `APIGroupList` for `/apis`.
pub fn group_list(catalog: &Catalog) -> Value {
    let groups: Vec<Value> = ordered_groups(catalog)
        .into_iter()
        .filter(|(group, _)| !group.is_empty())
        .map(|(group, versions)| group_doc(&group, &versions))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `APIGroup` for `/apis/<group>`.
pub fn group(catalog: &Catalog, name: &str) -> Option<Value> {
    let (group, versions) = all_groups(catalog)
        .into_iter()
        .find(|(group, _)| group == name && !group.is_empty())?;
    let mut doc = group_doc(&group, &versions);
    doc["kind"] = "APIGroup".into();
    doc["apiVersion"] = "v1".into();
    Some(doc)
}

/// `APIResourceList` for `/api/v1` or `/apis/<group>/<version>`.
pub fn resource_list(catalog: &Catalog, group: &str, version: &str) -> Option<Value> {
    if !catalog.serves(group, version) && reviews_of(group, version).next().is_none() {
        return None;
    }
    let mut resources = Vec::new();
    for info in catalog.resources(group, version) {
        let mut resource = json!({
            "name": info.plural,
            "singularName": info.singular,
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": info.verbs(),
        });
        if !info.short_names.is_empty() {
            resource["shortNames"] = json!(info.short_names);
        }
        if !info.categories.is_empty() {
            resource["categories"] = json!(info.categories);
        }
        resources.push(resource);
        if info.status {
            resources.push(json!({
                "name": format!("{}/status", info.plural),
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if info.scale.is_some() {
            resources.push(json!({
                "name": format!("{}/scale", info.plural),
                "singularName": "",
                "namespaced": info.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
        if is_core_pods(&info) {
            resources.push(json!({
                "name": "pods/exec",
                "singularName": "",
                "namespaced": true,
                "kind": "PodExecOptions",
                "verbs": ["create", "get"],
            }));
            resources.push(json!({
                "name": "pods/log",
                "singularName": "",
                "namespaced": true,
                "kind": "Pod",
                "verbs": ["get"],
            }));
        }
        if crate::certificates::is_csr(&info) {
            resources.push(json!({
                "name": format!("{}/approval", info.plural),
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if has_token_subresource(&info) {
            resources.push(json!({
                "name": "serviceaccounts/token",
                "singularName": "",
                "namespaced": true,
                "group": "authentication.k8s.io",
                "version": "v1",
                "kind": "TokenRequest",
                "verbs": ["create"],
            }));
        }
    }
    for review in reviews_of(group, version) {
        resources.push(json!({
            "name": review.plural,
            "singularName": review.singular,
            "namespaced": review.namespaced,
            "kind": review.kind,
            "verbs": ["create"],
        }));
    }
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}
