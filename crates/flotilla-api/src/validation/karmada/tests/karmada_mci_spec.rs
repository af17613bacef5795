//! Kubernetes' Ingress spec cases as Karmada restates them for MultiClusterIngress
//! (`pkg/util/lifted/validatingmci_test.go`), plus the messages of the rules those cases do
//! not reach.

use serde_json::{Value, json};

use super::*;

fn backend() -> Value {
    json!({"service": {"name": "defaultbackend", "port": {"number": 80}}})
}

/// The base MultiClusterIngress of `TestValidateIngress`.
fn base() -> Value {
    json!({
        "metadata": {"name": "foo", "namespace": "default"},
        "spec": {
            "defaultBackend": backend(),
            "rules": [{"host": "foo.bar.com", "http": {"paths": [{
                "path": "/foo", "pathType": "ImplementationSpecific", "backend": backend(),
            }]}}],
        },
        "status": {"loadBalancer": {"ingress": [{"ip": "127.0.0.1"}]}},
    })
}

fn errors(object: &Value) -> Vec<FieldError> {
    validate(Kind::MultiClusterIngress, object, None)
}

fn fields(object: &Value) -> Vec<String> {
    errors(object).iter().map(|e| e.field.clone()).collect()
}

fn spec_errors(spec: Value) -> Vec<String> {
    messages(&errors(&json!({"metadata": {"name": "foo"}, "spec": spec})))
}

/// A spec routing `/` by `path_type` to `backend`.
fn routed(path: &str, path_type: &str, backend: Value) -> Value {
    json!({"rules": [{"host": "foo.bar.com", "http": {"paths": [
        {"path": path, "pathType": path_type, "backend": backend}
    ]}}]})
}

const PATH: &str = "spec.rules[0].http.paths[0]";

#[test]
fn validate_ingress_cases() {
    // TestValidateIngress: the fields the errors name, in order.
    let both = json!({
        "service": {"name": "defaultbackend", "port": {"number": 80}},
        "resource": {"apiGroup": "example.com", "kind": "foo", "name": "bar"},
    });
    let path0 = "/spec/rules/0/http/paths/0";
    type Tweak = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Tweak, Vec<&str>)> = vec![
        (
            "empty path (implementation specific)",
            Box::new(|o| o.pointer_mut(path0).unwrap()["path"] = json!("")),
            vec![],
        ),
        (
            "valid path",
            Box::new(|o| o.pointer_mut(path0).unwrap()["path"] = json!("/valid")),
            vec![],
        ),
        (
            "backend with no service",
            Box::new(|o| o["spec"]["defaultBackend"]["service"]["name"] = json!("")),
            vec!["spec.defaultBackend.service.name"],
        ),
        (
            "invalid path type",
            Box::new(|o| o.pointer_mut(path0).unwrap()["pathType"] = json!("foo")),
            vec!["spec.rules[0].http.paths[0].pathType"],
        ),
        (
            "empty path (prefix)",
            Box::new(|o| {
                let p = o.pointer_mut(path0).unwrap();
                p["path"] = json!("");
                p["pathType"] = json!("Prefix");
            }),
            vec!["spec.rules[0].http.paths[0].path"],
        ),
        (
            "no paths",
            Box::new(|o| o["spec"]["rules"][0]["http"]["paths"] = json!([])),
            vec!["spec.rules[0].http.paths"],
        ),
        (
            "invalid host (foobar:80)",
            Box::new(|o| o["spec"]["rules"][0]["host"] = json!("foobar:80")),
            vec!["spec.rules[0].host"],
        ),
        (
            "invalid host (127.0.0.1)",
            Box::new(|o| o["spec"]["rules"][0]["host"] = json!("127.0.0.1")),
            vec!["spec.rules[0].host"],
        ),
        (
            "valid wildcard host",
            Box::new(|o| o["spec"]["rules"][0]["host"] = json!("*.bar.com")),
            vec![],
        ),
        (
            "invalid wildcard host (foo.*.bar.com)",
            Box::new(|o| o["spec"]["rules"][0]["host"] = json!("foo.*.bar.com")),
            vec!["spec.rules[0].host"],
        ),
        (
            "invalid wildcard host (*)",
            Box::new(|o| o["spec"]["rules"][0]["host"] = json!("*")),
            vec!["spec.rules[0].host"],
        ),
        (
            // Karmada lists this case twice, as "... service name ..." and "... service port ...".
            "path resource backend and service are not allowed together",
            Box::new({
                let both = both.clone();
                move |o| o.pointer_mut(path0).unwrap()["backend"] = both.clone()
            }),
            vec!["spec.rules[0].http.paths[0].backend"],
        ),
        (
            // Likewise listed twice in Karmada.
            "spec.backend resource and service are not allowed together",
            Box::new(move |o| o["spec"]["defaultBackend"] = both.clone()),
            vec!["spec.defaultBackend"],
        ),
    ];
    for (name, tweak, expected) in cases {
        let mut object = base();
        tweak(&mut object);
        assert_eq!(fields(&object), expected, "{name}");
    }
}

#[test]
fn validate_ingress_tls() {
    // TestValidateIngressTLS
    let mut bad = base();
    bad["spec"]["rules"][0]["host"] = json!("*.foo.bar.com");
    bad["spec"]["tls"] = json!([{"hosts": ["foo.*.bar.com"]}]);
    let errs = errors(&bad);
    assert_eq!(errs[0].field, "spec.tls[0].hosts[0]");
    assert!(errs[0].to_string().contains(" Invalid value"), "{errs:?}");
    let mut good = base();
    good["spec"]["rules"][0]["host"] = json!("*.bar.com");
    good["spec"]["tls"] = json!([{"hosts": ["*.bar.com"]}]);
    assert!(errors(&good).is_empty());
}

#[test]
fn validate_empty_ingress_tls() {
    // TestValidateEmptyIngressTLS: no default backend, a path without `path`.
    for tls in [json!([{}]), json!([{"hosts": []}])] {
        let object = json!({"metadata": {"name": "foo", "namespace": "default"}, "spec": {
            "rules": [{"host": "foo.bar.com", "http": {"paths": [{
                "pathType": "ImplementationSpecific",
                "backend": {"service": {"name": "defaultbackend", "port": {"number": 443}}},
            }]}}],
            "tls": tls,
        }});
        assert!(errors(&object).is_empty(), "{tls}");
    }
}

#[test]
fn validate_ingress_status_update() {
    // TestValidateIngressStatusUpdate: the status is checked on update only.
    let status = |ip: &str, hostname: &str| {
        let mut object = base();
        object["metadata"]["resourceVersion"] = json!("9");
        object["status"] = json!({"loadBalancer": {"ingress": [{"ip": ip, "hostname": hostname}]}});
        object
    };
    let old = status("127.0.0.1", "foo.bar.com");
    let update = |object: &Value| validate(Kind::MultiClusterIngress, object, Some(&old));
    assert!(update(&status("127.0.0.2", "foo.com")).is_empty());
    let invalid_ip = status("abcd", "foo.com");
    assert_eq!(
        messages(&update(&invalid_ip)),
        ["status.loadBalancer.ingress[0].ip: Invalid value: \"abcd\": must be a valid IP address"]
    );
    assert!(errors(&invalid_ip).is_empty(), "not checked on create");
    assert_eq!(
        messages(&update(&status("127.0.0.1", "127.0.0.1"))),
        [
            "status.loadBalancer.ingress[0].hostname: Invalid value: \"127.0.0.1\": must be a DNS name, not an IP address"
        ]
    );
}

#[test]
fn typical_multi_cluster_ingress_is_admitted() {
    let object = json!({
        "apiVersion": "networking.karmada.io/v1alpha1",
        "kind": "MultiClusterIngress",
        "metadata": {"name": "demo", "namespace": "default"},
        "spec": {
            "ingressClassName": "nginx",
            "rules": [{"host": "demo.example.com", "http": {"paths": [{
                "path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}},
            }]}}],
            "tls": [{"hosts": ["demo.example.com"], "secretName": "demo-tls"}],
        },
    });
    assert!(errors(&object).is_empty());
    assert!(validate(Kind::MultiClusterIngress, &object, Some(&object)).is_empty());
    assert_eq!(
        Kind::of("networking.karmada.io", "MultiClusterIngress"),
        Some(Kind::MultiClusterIngress)
    );
}

#[test]
fn nothing_to_route_to_is_refused() {
    assert_eq!(
        spec_errors(json!({})),
        ["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"]
    );
    assert_eq!(
        spec_errors(json!({"rules": [], "defaultBackend": {}})),
        ["spec.defaultBackend: Invalid value: \"\": resource or service backend is required"]
    );
}

#[test]
fn path_syntax_by_path_type() {
    let ok = backend();
    let path_errors =
        |path: &str, path_type: &str| spec_errors(routed(path, path_type, ok.clone()));
    assert_eq!(
        path_errors("foo", "Exact"),
        [format!(
            "{PATH}.path: Invalid value: \"foo\": must be an absolute path"
        )]
    );
    assert_eq!(
        path_errors("/a//b/./c/../%2f%2F/..", "Prefix"),
        ["//", "/./", "/../", "%2f", "%2F"]
            .iter()
            .map(|s| format!(
                "{PATH}.path: Invalid value: \"/a//b/./c/../%2f%2F/..\": must not contain '{s}'"
            ))
            .chain([format!(
                "{PATH}.path: Invalid value: \"/a//b/./c/../%2f%2F/..\": cannot end with '/..'"
            )])
            .collect::<Vec<_>>()
    );
    assert_eq!(
        path_errors("/a/.", "Exact"),
        [format!(
            "{PATH}.path: Invalid value: \"/a/.\": cannot end with '/.'"
        )]
    );
    assert!(path_errors("/a//b", "ImplementationSpecific").is_empty());
    assert_eq!(
        path_errors("a", "ImplementationSpecific"),
        [format!(
            "{PATH}.path: Invalid value: \"a\": must be an absolute path"
        )]
    );
    assert_eq!(
        path_errors("/", "foo"),
        [format!(
            "{PATH}.pathType: Unsupported value: \"foo\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\""
        )]
    );
    // Without a path type nothing else of the path is checked, not even its backend.
    assert_eq!(
        spec_errors(json!({"rules": [{"http": {"paths": [{"path": "x", "backend": {}}]}}]})),
        [format!(
            "{PATH}.pathType: Required value: pathType must be specified"
        )]
    );
    assert_eq!(
        spec_errors(json!({"rules": [{"host": "a.com", "http": {}}]})),
        ["spec.rules[0].http.paths: Required value"]
    );
}

#[test]
fn service_backends_need_a_name_and_one_port() {
    let with = |service: Value| spec_errors(routed("/", "Prefix", json!({"service": service})));
    let at = format!("{PATH}.backend");
    assert_eq!(
        with(json!({"name": "Web", "port": {"number": 80}})),
        [format!(
            "{at}.service.name: Invalid value: \"Web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        )]
    );
    assert_eq!(
        with(json!({"name": "web", "port": {"name": "http", "number": 80}})),
        [format!(
            "{at}: Invalid value: \"\": cannot set both port name & port number"
        )]
    );
    assert_eq!(
        with(json!({"name": "web", "port": {}})),
        [format!(
            "{at}: Required value: port name or number is required"
        )]
    );
    assert_eq!(
        with(json!({"name": "web", "port": {"number": 65536}})),
        [format!(
            "{at}.service.port.number: Invalid value: 65536: must be between 1 and 65535, inclusive"
        )]
    );
    assert!(with(json!({"name": "web", "port": {"name": "http"}})).is_empty());
    let port = format!("{at}.service.port.name");
    assert_eq!(
        with(json!({"name": "web", "port": {"name": "-very--long_name-1"}})),
        [
            format!(
                "{port}: Invalid value: \"-very--long_name-1\": must be no more than 15 characters"
            ),
            format!(
                "{port}: Invalid value: \"-very--long_name-1\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
            ),
            format!(
                "{port}: Invalid value: \"-very--long_name-1\": must not contain consecutive hyphens"
            ),
            format!(
                "{port}: Invalid value: \"-very--long_name-1\": must not begin or end with a hyphen"
            ),
        ]
    );
    assert_eq!(
        with(json!({"name": "web", "port": {"name": "8080"}})),
        [format!(
            "{port}: Invalid value: \"8080\": must contain at least one letter (a-z)"
        )]
    );
}

#[test]
fn resource_backends_are_typed_references() {
    let with = |resource: Value| spec_errors(json!({"defaultBackend": {"resource": resource}}));
    assert!(with(json!({"apiGroup": "example.com", "kind": "Bucket", "name": "b"})).is_empty());
    assert_eq!(
        with(json!({"apiGroup": "Example"})),
        [
            "spec.defaultBackend.resource.apiGroup: Invalid value: \"Example\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.defaultBackend.resource.kind: Required value: kind is required",
            "spec.defaultBackend.resource.name: Required value: name is required",
        ]
    );
    assert_eq!(
        with(json!({"kind": "a/b", "name": ".."})),
        [
            "spec.defaultBackend.resource.kind: Invalid value: \"a/b\": may not contain '/'",
            "spec.defaultBackend.resource.name: Invalid value: \"..\": may not be '..'",
        ]
    );
}

#[test]
fn hosts_tls_and_class_names() {
    let wildcard = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    assert_eq!(
        spec_errors(json!({
            "defaultBackend": backend(),
            "rules": [{"host": "*"}, {"host": "10.0.0.5"}],
            "tls": [{"hosts": ["ok.com", "*.x.*"], "secretName": "Bad_Secret"}],
            "ingressClassName": "Nginx",
        })),
        [
            format!("spec.rules[0].host: Invalid value: \"*\": {wildcard}"),
            "spec.rules[1].host: Invalid value: \"10.0.0.5\": must be a DNS name, not an IP address"
                .to_owned(),
            format!("spec.tls[0].hosts[1]: Invalid value: \"*.x.*\": {wildcard}"),
            format!("spec.tls[0].secretName: Invalid value: \"Bad_Secret\": {subdomain}"),
            format!("spec.ingressClassName: Invalid value: \"Nginx\": {subdomain}"),
        ]
    );
}
