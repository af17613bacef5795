//! Karmada's `mcs_test.go` "EndpointSlices change testing — Update Deployment's replicas"
//! through `up --demo` and kubectl: the ServiceExport and ServiceImport CRDs (installed by
//! `up`) propagated to every member by ClusterPropagationPolicies; a Deployment and Service
//! created directly in the first member; a ServiceExport propagated there brings its slices to
//! the control plane as `imported-<cluster>-<slice>` of Service `derived-<name>`; a ServiceImport
//! propagated to the second member carries the derived Service and those slices there; scaling
//! the first member's Deployment shows in the second member's slices. Then, beyond Karmada's
//! case: the exported Service deleted in the first member takes its copies away (and brings
//! them back when created again), and deleting the export and the import takes the imported
//! slices and the derived Service away from the control plane.

use crate::support::{ControlPlane, MEMBERS, eventually};

const NS: &str = "mcs-export";
const APP: &str = "hello-x";
const DERIVED: &str = "derived-hello-x";

/// `(name, endpoints, managed-by)` of the slices of `service` in the namespace of the control
/// plane (`None`) or a member.
async fn slices(
    plane: &ControlPlane,
    context: Option<&str>,
    service: &str,
) -> Vec<(String, usize, String)> {
    plane.endpoint_slices(context, NS, service).await
}

/// The CRDs propagated to every member by ClusterPropagationPolicies, and namespace `ns`
/// created; waits until every member serves ServiceExports in it.
async fn crds_on_members(plane: &ControlPlane, ns: &str) {
    plane
        .apply(
            None,
            &format!(
                "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {ns}}}\n---\n{}",
                crd_policies()
            ),
        )
        .await;
    for member in MEMBERS {
        eventually(
            &format!("the CRDs and namespace {ns} in {member}"),
            || async move {
                for what in [
                    "crd/serviceexports.multicluster.x-k8s.io",
                    "crd/serviceimports.multicluster.x-k8s.io",
                    &format!("namespace/{ns}"),
                ] {
                    plane
                        .try_kubectl(&["--context", member, "get", what])
                        .await
                        .map_err(|e| format!("{what}: {e}"))?;
                }
                plane
                    .try_kubectl(&["--context", member, "-n", ns, "get", "serviceexports"])
                    .await
                    .map(|_| ())
            },
        )
        .await;
    }
}

/// `managed-by` of the reports of Service `ns/app` in `cluster`'s execution namespace (the
/// Works whose slice belongs to it), comma-separated.
async fn reports(plane: &ControlPlane, cluster: &str, ns: &str, app: &str) -> String {
    plane
        .kubectl(&[
            "-n",
            &format!("karmada-es-{cluster}"),
            "get",
            "works",
            "-o",
            "jsonpath={range .items[*]}{.metadata.labels.endpointslice\\.karmada\\.io/managed-by} {.spec.workload.manifests[0].metadata.labels.kubernetes\\.io/service-name} {.spec.workload.manifests[0].metadata.namespace}{\"\\n\"}{end}",
        ])
        .await
        .lines()
        .filter(|l| l.ends_with(&format!(" {app} {ns}")))
        .map(|l| l.split(' ').next().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join(",")
}

/// Waits until the slices of `service` in `context` hold `want` endpoints in total.
async fn endpoints(plane: &ControlPlane, context: Option<&str>, service: &str, want: usize) {
    let place = context.unwrap_or("the control plane");
    eventually(
        &format!("{want} endpoints of {service} in {place}"),
        || async {
            let found = slices(plane, context, service).await;
            let total: usize = found.iter().map(|(_, n, _)| n).sum();
            if total == want {
                Ok(())
            } else {
                Err(format!("{found:?}"))
            }
        },
    )
    .await;
}

fn crd_policies() -> String {
    let members = format!("[{}]", MEMBERS.join(", "));
    ["serviceexports", "serviceimports"]
        .iter()
        .map(|plural| {
            format!(
                "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterPropagationPolicy\nmetadata: {{name: {plural}-crd}}\nspec:\n  resourceSelectors: [{{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, name: {plural}.multicluster.x-k8s.io}}]\n  placement: {{clusterAffinity: {{clusterNames: {members}}}}}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

fn member_workload() -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {APP}, namespace: {NS}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: hello}}}}\n  template:\n    metadata: {{labels: {{app: hello}}}}\n    spec:\n      containers:\n      - {{name: hello-tcp, image: busybox, args: [nc, -lk, -p, '42', -v, -e, echo, hello]}}\n      - {{name: hello-udp, image: busybox, args: [nc, -lk, -p, '42', -u, -v, -e, echo, hello]}}\n---\n\
apiVersion: v1\nkind: Service\nmetadata: {{name: {APP}, namespace: {NS}}}\nspec:\n  selector: {{app: hello}}\n  ports: [{{name: tcp, port: 42, protocol: TCP}}, {{name: udp, port: 42, protocol: UDP}}]\n"
    )
}

fn export(ns: &str, app: &str, cluster: &str) -> String {
    format!(
        "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {{name: {app}, namespace: {ns}}}\n---\n\
apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: export-{app}-policy, namespace: {ns}}}\nspec:\n  resourceSelectors: [{{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceExport, name: {app}, namespace: {ns}}}]\n  placement: {{clusterAffinity: {{clusterNames: [{cluster}]}}}}\n"
    )
}

fn import(cluster: &str) -> String {
    format!(
        "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceImport\nmetadata: {{name: {APP}, namespace: {NS}}}\nspec:\n  type: ClusterSetIP\n  ips: [10.255.0.42]\n  ports: [{{name: tcp, port: 42, protocol: TCP}}, {{name: udp, port: 42, protocol: UDP}}]\n---\n\
apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {{name: import-{APP}-policy, namespace: {NS}}}\nspec:\n  resourceSelectors: [{{apiVersion: multicluster.x-k8s.io/v1alpha1, kind: ServiceImport, name: {APP}, namespace: {NS}}}]\n  placement: {{clusterAffinity: {{clusterNames: [{cluster}]}}}}\n"
    )
}

/// The whole case, then the cleanup.
pub async fn endpoint_slices_follow_the_exporting_deployments_replicas(plane: &ControlPlane) {
    let (exporter, importer) = (MEMBERS[0], MEMBERS[1]);
    // The CRDs are there from the start, and reach every member through the policies.
    for crd in [
        "serviceexports.multicluster.x-k8s.io",
        "serviceimports.multicluster.x-k8s.io",
    ] {
        plane.kubectl(&["get", "crd", crd]).await;
    }
    crds_on_members(plane, NS).await;

    // The workload lives in the exporting member only.
    plane.apply(Some(exporter), &member_workload()).await;
    endpoints(plane, Some(exporter), APP, 1).await;

    // Exporting brings its slices to the control plane.
    plane.apply(None, &export(NS, APP, exporter)).await;
    endpoints(plane, None, DERIVED, 1).await;
    let collected = slices(plane, None, DERIVED).await;
    for (name, _, managed_by) in &collected {
        assert!(
            name.starts_with(&format!("imported-{exporter}-{APP}")),
            "{collected:?}"
        );
        assert_eq!(managed_by, "endpointslice-controller.karmada.io");
    }
    let reported = reports(plane, exporter, NS, APP).await;
    assert_eq!(reported, "ServiceExport", "the reports' managed-by");

    // Importing carries the derived Service and the slices to the importing member.
    plane.apply(None, &import(importer)).await;
    endpoints(plane, Some(importer), DERIVED, 1).await;
    plane
        .await_events(NS, "ServiceImport", APP, &["SyncDerivedServiceSucceed"])
        .await;
    let derived = plane
        .get(
            Some(importer),
            NS,
            &format!("service/{DERIVED}"),
            "{.spec.type} {.spec.ports[*].name}",
        )
        .await;
    assert_eq!(derived, "ClusterIP tcp udp");
    let ingress = plane
        .get(
            None,
            NS,
            &format!("service/{DERIVED}"),
            "{.status.loadBalancer.ingress[*].ip}",
        )
        .await;
    assert_eq!(
        ingress, "10.255.0.42",
        "the import's IPs in the derived Service's status"
    );

    // Scaling the exporting Deployment shows in the importing member.
    plane
        .kubectl(&[
            "--context",
            exporter,
            "-n",
            NS,
            "scale",
            "deployment",
            APP,
            "--replicas=2",
        ])
        .await;
    endpoints(plane, Some(exporter), APP, 2).await;
    endpoints(plane, None, DERIVED, 2).await;
    endpoints(plane, Some(importer), DERIVED, 2).await;

    // Beyond Karmada's case: the exported Service's slice goes from the exporting member, and
    // its copies from the control plane and the importing member; a new Service brings them back.
    plane
        .kubectl(&[
            "--context",
            exporter,
            "-n",
            NS,
            "delete",
            &format!("service/{APP}"),
        ])
        .await;
    for context in [None, Some(importer)] {
        eventually(
            "the imported slices follow the member's slice away",
            || async move {
                let left = slices(plane, context, DERIVED).await;
                if left.is_empty() {
                    Ok(())
                } else {
                    Err(format!("{context:?}: {left:?}"))
                }
            },
        )
        .await;
    }
    // (Applied again, the Deployment is back to one replica.)
    plane.apply(Some(exporter), &member_workload()).await;
    endpoints(plane, Some(importer), DERIVED, 1).await;

    // Karmada's cleanup: the export and the import go, and with them what they made.
    plane
        .kubectl(&[
            "-n",
            NS,
            "delete",
            &format!("serviceexport/{APP}"),
            &format!("serviceimport/{APP}"),
        ])
        .await;
    eventually("the imported slices leave the control plane", || async {
        let left = slices(plane, None, DERIVED).await;
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!("{left:?}"))
        }
    })
    .await;
    eventually("the derived Service leaves the control plane", || async {
        let left = plane
            .get(None, NS, &format!("service/{DERIVED}"), "{.metadata.name}")
            .await;
        if left.is_empty() { Ok(()) } else { Err(left) }
    })
    .await;
}

/// A Service both exposed by a CrossCluster MultiClusterService and exported (needs gate
/// `MultiClusterService`): its slice is reported once, `managed-by` naming both features; the
/// MultiClusterService's copies and the control plane's imports both follow it; deleting the
/// ServiceExport withdraws only its share (the imports go, the copies stay).
pub async fn a_slice_exported_both_ways_is_reported_once(plane: &ControlPlane) {
    let (ns, app) = ("mcs-both", "mcs-both");
    let (provider, consumer) = (MEMBERS[0], MEMBERS[1]);
    crate::mcs::exposed(plane, ns, app, &[provider], &[provider], &[consumer]).await;
    crds_on_members(plane, ns).await;
    plane.apply(None, &export(ns, app, provider)).await;
    let derived = format!("derived-{app}");
    eventually("one report managed by both features", || async {
        let reported = reports(plane, provider, ns, app).await;
        let imported = plane.endpoint_slices(None, ns, &derived).await;
        if reported == "MultiClusterService.ServiceExport" && !imported.is_empty() {
            Ok(())
        } else {
            Err(format!("reports: {reported}; imported: {imported:?}"))
        }
    })
    .await;
    plane
        .kubectl(&["-n", ns, "delete", &format!("serviceexport/{app}")])
        .await;
    eventually("the MultiClusterService's share kept alone", || async {
        let reported = reports(plane, provider, ns, app).await;
        let imported = plane.endpoint_slices(None, ns, &derived).await;
        if reported == "MultiClusterService" && imported.is_empty() {
            Ok(())
        } else {
            Err(format!("reports: {reported}; imported: {imported:?}"))
        }
    })
    .await;
    let copies = plane.endpoint_slices(Some(consumer), ns, app).await;
    assert!(
        copies
            .iter()
            .any(|(name, n, by)| name.starts_with(&format!("{provider}-"))
                && *n > 0
                && by == "endpointslice-dispatch-controller.karmada.io"),
        "the consumer keeps its copy: {copies:?}"
    );
}

/// The exporting member's workload of Karmada's case in `ns`: one pod, two busybox listeners
/// on port 42 (TCP and UDP) answering `hello`, behind Service `app`.
fn listeners(ns: &str, app: &str) -> String {
    member_workload()
        .replace(&format!("namespace: {NS}"), &format!("namespace: {ns}"))
        .replace(&format!("name: {APP},"), &format!("name: {app},"))
}

fn import_of(ns: &str, app: &str, cluster: &str) -> String {
    import(cluster)
        .replace(&format!("namespace: {NS}"), &format!("namespace: {ns}"))
        .replace(&format!("name: {APP}"), &format!("name: {app}"))
        .replace(
            &format!("import-{APP}-policy"),
            &format!("import-{app}-policy"),
        )
}

/// A bare busybox pod `name` running `args`.
fn request_pod(ns: &str, name: &str, args: &[&str]) -> String {
    let args: Vec<String> = args
        .iter()
        .map(|a| serde_json::to_string(a).expect("a string"))
        .collect();
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\nspec:\n  containers:\n  - {{name: request, image: busybox, args: [{}]}}\n",
        args.join(", ")
    )
}

/// Waits until the log of pod `name` in `context` is exactly `want`.
async fn log_becomes(plane: &ControlPlane, context: &str, ns: &str, name: &str, want: &str) {
    eventually(
        &format!("the log of {context}/{ns}/{name} is {want:?}"),
        || async {
            let log = plane
                .try_kubectl(&["--context", context, "-n", ns, "logs", name])
                .await?;
            if log == want {
                Ok(())
            } else {
                Err(format!("{log:?}"))
            }
        },
    )
    .await;
}

/// Karmada's `mcs_test.go` "Connectivity testing": a Service exported from the first member
/// and imported into the second; pods of the second member reach the exported pod through the
/// derived Service's cluster IP, over TCP (`nc IP 42`) and UDP (`echo hi | nc -u IP 42`), and
/// log its `hello` (pod IPs overlap between simulated clusters: the imported slices'
/// provenance says which cluster an address is in). Beyond Karmada's case: a cluster IP
/// without endpoints refuses.
pub async fn pods_reach_an_imported_service_through_its_cluster_ip(plane: &ControlPlane) {
    let (ns, app) = ("mcs-connect", "hello-c");
    let derived = format!("derived-{app}");
    let (exporter, importer) = (MEMBERS[0], MEMBERS[1]);
    crds_on_members(plane, ns).await;
    plane.apply(Some(exporter), &listeners(ns, app)).await;
    plane.apply(None, &export(ns, app, exporter)).await;
    eventually("the export's endpoint on the control plane", || async {
        let found = plane.endpoint_slices(None, ns, &derived).await;
        if found.iter().map(|(_, n, _)| n).sum::<usize>() == 1 {
            Ok(())
        } else {
            Err(format!("{found:?}"))
        }
    })
    .await;
    plane.apply(None, &import_of(ns, app, importer)).await;
    plane
        .await_events(ns, "ServiceImport", app, &["SyncDerivedServiceSucceed"])
        .await;
    eventually("the imported endpoint in the importing member", || async {
        let found = plane.endpoint_slices(Some(importer), ns, &derived).await;
        if found.iter().map(|(_, n, _)| n).sum::<usize>() == 1 {
            Ok(())
        } else {
            Err(format!("{found:?}"))
        }
    })
    .await;
    let ip = eventually("the derived Service's cluster IP", || async {
        let ip = plane
            .get(
                Some(importer),
                ns,
                &format!("service/{derived}"),
                "{.spec.clusterIP}",
            )
            .await;
        if ip.parse::<std::net::Ipv4Addr>().is_ok() {
            Ok(ip)
        } else {
            Err(ip)
        }
    })
    .await;

    // TCP, then UDP, across clusters through the cluster IP.
    plane
        .apply(
            Some(importer),
            &request_pod(ns, "request-tcp", &["nc", &ip, "42"]),
        )
        .await;
    log_becomes(plane, importer, ns, "request-tcp", "hello\n").await;
    let udp = format!("echo hi | nc -u {ip} 42");
    plane
        .apply(
            Some(importer),
            &request_pod(ns, "request-udp", &["sh", "-c", &udp]),
        )
        .await;
    log_becomes(plane, importer, ns, "request-udp", "hello\n").await;

    // A cluster IP without endpoints refuses: no hello, nc fails.
    plane
        .apply(
            Some(importer),
            &format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: nobody, namespace: {ns}}}\nspec:\n  selector: {{app: nobody}}\n  ports: [{{name: tcp, port: 42, protocol: TCP}}]\n"
            ),
        )
        .await;
    let nobody = eventually("the empty Service's cluster IP", || async {
        let ip = plane
            .get(Some(importer), ns, "service/nobody", "{.spec.clusterIP}")
            .await;
        if ip.parse::<std::net::Ipv4Addr>().is_ok() {
            Ok(ip)
        } else {
            Err(ip)
        }
    })
    .await;
    assert_ne!(nobody, ip, "each Service has its own cluster IP");
    let refused = format!("nc -vv {nobody} 42; echo exit=$?");
    plane
        .apply(
            Some(importer),
            &request_pod(ns, "request-refused", &["sh", "-c", &refused]),
        )
        .await;
    log_becomes(
        plane,
        importer,
        ns,
        "request-refused",
        &format!("nc: {nobody} ({nobody}:42): Connection refused\nexit=1\n"),
    )
    .await;

    plane
        .kubectl(&[
            "-n",
            ns,
            "delete",
            &format!("serviceexport/{app}"),
            &format!("serviceimport/{app}"),
        ])
        .await;
}
