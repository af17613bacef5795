use super::*;

#[test]
fn resource_paths_parse_as_kubes_request_info() {
    let info = resource_info("/apis/apps/v1/namespaces/default/deployments/web/scale").unwrap();
    assert_eq!(
        (
            info.group,
            info.version,
            info.namespace,
            info.resource,
            info.name,
            info.subresource
        ),
        (
            "apps",
            "v1",
            Some("default"),
            "deployments",
            Some("web"),
            Some("scale")
        )
    );
    let info = resource_info("/api/v1/namespaces/kube-system").unwrap();
    assert_eq!(
        (info.resource, info.name, info.namespace),
        ("namespaces", Some("kube-system"), Some("kube-system"))
    );
    let info = resource_info("/api/v1/nodes").unwrap();
    assert_eq!((info.group, info.resource, info.name), ("", "nodes", None));
    // The cluster proxy: resource, name, subresource; the rest of the path is not a label.
    let info =
        resource_info("/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/pods")
            .unwrap();
    assert_eq!(
        (info.resource, info.name, info.subresource),
        ("clusters", Some("member1"), Some("proxy"))
    );
    assert!(resource_info("/apis/apps/v1").is_none());
    assert!(resource_info("/metrics").is_none());
    assert!(resource_info("/random/path").is_none());
}
