//! How kube-apiserver labels its request metrics (`apiserver_request_total`,
//! `apiserver_request_duration_seconds`, `apiserver_longrunning_requests`), so that dashboards and
//! alerts written for kube-apiserver read Flotilla's the same way.
//!
//! Ported from kubernetes/apiserver `pkg/endpoints/metrics/metrics.go` (`CleanScope`,
//! `CanonicalVerb`, `CleanVerb`, `cleanVerb`, `cleanDryRun`) and the long-running rule of
//! `pkg/server/config.go` (`DefaultLongRunningFunc`: watches and the `proxy`, `attach`, `log`,
//! `exec` and `portforward` subresources), at commit 24a394e516bf.

/// What the labels are computed from: kube's `RequestInfo` for a resource request.
#[derive(Debug, Clone, Copy)]
pub struct RequestFacts<'a> {
    /// Upper-case HTTP method.
    pub method: &'a str,
    /// `create`, `get`, `list`, `watch`, … (the authorization verb).
    pub verb: &'a str,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
    pub subresource: Option<&'a str>,
    /// Whether `?watch=` asks for a watch.
    pub watch: bool,
    /// Whether the body is a server-side apply patch.
    pub apply: bool,
}

/// The subresources kube reports as `CONNECT`.
const CONNECT_SUBRESOURCES: [&str; 5] = ["log", "exec", "portforward", "attach", "proxy"];

/// kube's `CleanScope`: `resource` for one named object (or a create), `namespace` for a
/// namespaced collection, `cluster` for a cluster-wide one.
pub fn scope(facts: &RequestFacts<'_>) -> &'static str {
    if facts.name.is_some_and(|n| !n.is_empty()) || facts.verb == "create" {
        "resource"
    } else if facts.namespace.is_some_and(|n| !n.is_empty()) {
        "namespace"
    } else {
        "cluster"
    }
}

/// The reported verb: the HTTP method, `GET` on a collection as `LIST`, a watch as `WATCH`, a
/// server-side apply as `APPLY`, the connect subresources as `CONNECT`; anything else `other`.
pub fn verb(facts: &RequestFacts<'_>, scope: &str) -> &'static str {
    let method = match facts.method {
        "GET" | "HEAD" if scope != "resource" && !scope.is_empty() => "LIST",
        "GET" | "HEAD" => "GET",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        _ => return "other",
    };
    if matches!(method, "GET" | "LIST") && facts.watch {
        return "WATCH";
    }
    if method == "PATCH" && facts.apply {
        return "APPLY";
    }
    if facts
        .subresource
        .is_some_and(|s| CONNECT_SUBRESOURCES.contains(&s))
    {
        return "CONNECT";
    }
    method
}

/// kube's `DefaultLongRunningFunc`: watches and the streaming subresources run as long as the
/// client keeps them, are not in-flight requests, and are counted when they end.
pub fn long_running(facts: &RequestFacts<'_>) -> bool {
    facts.verb == "watch"
        || facts.watch
        || facts
            .subresource
            .is_some_and(|s| matches!(s, "proxy" | "attach" | "log" | "exec" | "portforward"))
}

/// `dry_run`: empty without `dryRun`, `All` for `dryRun=All`, `invalid` for anything else.
pub fn dry_run(query_value: Option<&str>) -> &'static str {
    match query_value {
        None => "",
        Some("All") => "All",
        Some(_) => "invalid",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(method: &'a str, verb: &'a str) -> RequestFacts<'a> {
        RequestFacts {
            method,
            verb,
            namespace: None,
            name: None,
            subresource: None,
            watch: false,
            apply: false,
        }
    }

    #[test]
    fn verbs_and_scopes_are_kubes() {
        let get = RequestFacts {
            namespace: Some("default"),
            name: Some("web"),
            ..facts("GET", "get")
        };
        assert_eq!(scope(&get), "resource");
        assert_eq!(verb(&get, scope(&get)), "GET");

        let list = RequestFacts {
            namespace: Some("default"),
            ..facts("GET", "list")
        };
        assert_eq!(
            (scope(&list), verb(&list, scope(&list))),
            ("namespace", "LIST")
        );

        let watch_all = RequestFacts {
            watch: true,
            ..facts("GET", "watch")
        };
        assert_eq!(
            (scope(&watch_all), verb(&watch_all, scope(&watch_all))),
            ("cluster", "WATCH")
        );
        assert!(long_running(&watch_all));

        // A create names no object but is `resource` scoped, reported as POST.
        let create = RequestFacts {
            namespace: Some("default"),
            ..facts("POST", "create")
        };
        assert_eq!(
            (scope(&create), verb(&create, scope(&create))),
            ("resource", "POST")
        );
        assert!(!long_running(&create));

        let apply = RequestFacts {
            name: Some("web"),
            apply: true,
            ..facts("PATCH", "patch")
        };
        assert_eq!(verb(&apply, scope(&apply)), "APPLY");

        let delete_all = RequestFacts {
            namespace: Some("default"),
            ..facts("DELETE", "deletecollection")
        };
        assert_eq!(verb(&delete_all, scope(&delete_all)), "DELETE");

        let logs = RequestFacts {
            namespace: Some("default"),
            name: Some("web-1"),
            subresource: Some("log"),
            ..facts("GET", "get")
        };
        assert_eq!(verb(&logs, scope(&logs)), "CONNECT");
        assert!(long_running(&logs));
        let status = RequestFacts {
            subresource: Some("status"),
            ..get
        };
        assert_eq!(verb(&status, scope(&status)), "GET");
        assert!(!long_running(&status));

        assert_eq!(verb(&facts("OPTIONS", "unknown"), "cluster"), "other");
    }

    #[test]
    fn dry_run_values() {
        assert_eq!(dry_run(None), "");
        assert_eq!(dry_run(Some("All")), "All");
        assert_eq!(dry_run(Some("Some")), "invalid");
    }
}
