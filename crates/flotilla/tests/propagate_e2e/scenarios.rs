//! The user scenarios, each in its own namespace of the shared `up --demo` control plane.

use crate::support::{ControlPlane, MEMBERS, await_value, eventually};

const DUPLICATED: &str = include_str!("duplicated.yaml");
const OVERRIDES: &str = include_str!("overrides.yaml");
const WEIGHTED: &str = include_str!("weighted.yaml");
const REPLACE: &str = include_str!("replace.yaml");
const DEPS: &str = include_str!("deps.yaml");
const CONFLICT: &str = include_str!("conflict.yaml");
const PREEXISTING: &str = include_str!("preexisting.yaml");
const DRIFT: &str = include_str!("drift.yaml");

/// `spec.replicas/status.readyReplicas` of a Deployment in each member.
const REPLICAS: &str = "{.spec.replicas}/{.status.readyReplicas}";

/// `member=value` lines for [`MEMBERS`], `value` for the listed ones and empty for the others.
fn expect_members(values: &[(&str, &str)]) -> String {
    MEMBERS
        .iter()
        .map(|m| {
            let value = values
                .iter()
                .find(|(name, _)| name == m)
                .map_or("", |(_, v)| *v);
            format!("{m}={value}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The Works (`karmada-es-<cluster>/<name>`) rendered from bindings of namespace `ns`, sorted.
async fn works_of(plane: &ControlPlane, ns: &str) -> String {
    let path = format!(
        "jsonpath={{range .items[?(@.metadata.annotations.resourcebinding\\.karmada\\.io/namespace==\"{ns}\")]}}{{.metadata.namespace}}/{{.metadata.name}}{{\"\\n\"}}{{end}}"
    );
    let out = plane
        .kubectl(&["get", "works", "--all-namespaces", "-o", &path])
        .await;
    let mut works: Vec<&str> = out.lines().collect();
    works.sort();
    works.join("\n")
}

/// `Scheduled FullyApplied` condition statuses of a ResourceBinding.
async fn binding_conditions(plane: &ControlPlane, ns: &str, name: &str) -> String {
    plane
        .get(
            None,
            ns,
            &format!("resourcebinding/{name}"),
            "{.status.conditions[?(@.type==\"Scheduled\")].status} {.status.conditions[?(@.type==\"FullyApplied\")].status}",
        )
        .await
}

/// Deletes a template and waits until its member objects, Works and binding are gone.
async fn delete_and_await_clean(plane: &ControlPlane, ns: &str, what: &str, binding: &str) {
    plane.kubectl(&["-n", ns, "delete", what]).await;
    await_value(
        &format!("{ns}/{what} deleted in every member"),
        &expect_members(&[]),
        || plane.per_member(ns, what, "{.metadata.name}"),
    )
    .await;
    await_value(&format!("the Works of {ns} deleted"), "", || {
        works_of(plane, ns)
    })
    .await;
    await_value(&format!("binding {ns}/{binding} deleted"), "", || {
        plane.get(
            None,
            ns,
            "resourcebindings",
            "{range .items[*]}{.metadata.name} {end}",
        )
    })
    .await;
}

/// Duplicated to all three members with the template status aggregated; an OverridePolicy
/// created, edited and deleted; the template deleted.
pub async fn duplicated_overridden_then_deleted(plane: &ControlPlane) {
    let ns = "e2e-dup";
    plane.apply(None, DUPLICATED).await;
    await_value(
        "duplicated: each member runs the full 2 replicas",
        &expect_members(&[
            ("cn-shanghai", "2/2"),
            ("us-west-2", "2/2"),
            ("eu-central-1", "2/2"),
        ]),
        || plane.per_member(ns, "deployment/web", REPLICAS),
    )
    .await;
    await_value(
        "duplicated: the template's status sums the members'",
        "6/6/6",
        || {
            plane.get(
                None,
                ns,
                "deployment/web",
                "{.status.replicas}/{.status.readyReplicas}/{.status.availableReplicas}",
            )
        },
    )
    .await;
    await_value("duplicated: binding conditions", "True True", || {
        binding_conditions(plane, ns, "web-deployment")
    })
    .await;
    plane
        .await_events(
            ns,
            "Deployment",
            "web",
            &[
                "GetReplicasSucceed",
                "ApplyPolicySucceed",
                "ScheduleBindingSucceed",
                "SyncWorkSucceed",
                "AggregateStatusSucceed",
            ],
        )
        .await;
    plane
        .await_events(
            ns,
            "ResourceBinding",
            "web-deployment",
            &[
                "ScheduleBindingSucceed",
                "SyncWorkSucceed",
                "AggregateStatusSucceed",
            ],
        )
        .await;

    // What a user reads: `kubectl describe` lists them under Events.
    let described = plane
        .kubectl(&["-n", ns, "describe", "deployment", "web"])
        .await;
    let events = described.split_once("Events:").map_or("", |(_, e)| e);
    for reason in [
        "ApplyPolicySucceed",
        "ScheduleBindingSucceed",
        "SyncWorkSucceed",
    ] {
        assert!(
            events.contains(reason),
            "describe shows {reason}:\n{described}"
        );
    }
    // In Karmada's words.
    assert!(
        events.contains("Get replicas of resource template successfully."),
        "{described}"
    );
    assert!(
        events.contains(&format!(
            "Sync work of ResourceBinding({ns}/web-deployment) successful."
        )),
        "{described}"
    );

    // An OverridePolicy for cn-shanghai: only that member changes.
    let image_and_tier = "{.spec.template.spec.containers[0].image} {.metadata.labels.tier}";
    plane.apply(None, OVERRIDES).await;
    await_value(
        "override: cn-shanghai gets the mirror and the label",
        &expect_members(&[
            (
                "cn-shanghai",
                "registry.cn-shanghai.example.com/nginx:1.27 china",
            ),
            ("us-west-2", "nginx:1.27 "),
            ("eu-central-1", "nginx:1.27 "),
        ]),
        || plane.per_member(ns, "deployment/web", image_and_tier),
    )
    .await;
    plane
        .await_events(ns, "Deployment", "web", &["ApplyOverridePolicySucceed"])
        .await;
    // Edited: the members follow.
    let edited = OVERRIDES
        .replace("registry.cn-shanghai.example.com", "mirror.example.cn")
        .replace("tier: china", "tier: cn");
    plane.apply(None, &edited).await;
    await_value(
        "override edited: cn-shanghai follows",
        &expect_members(&[
            ("cn-shanghai", "mirror.example.cn/nginx:1.27 cn"),
            ("us-west-2", "nginx:1.27 "),
            ("eu-central-1", "nginx:1.27 "),
        ]),
        || plane.per_member(ns, "deployment/web", image_and_tier),
    )
    .await;
    // Deleted: the label it added goes away with it.
    plane
        .kubectl(&["-n", ns, "delete", "overridepolicy", "web-regional"])
        .await;
    await_value(
        "override deleted: cn-shanghai back to the template",
        &expect_members(&[
            ("cn-shanghai", "nginx:1.27 "),
            ("us-west-2", "nginx:1.27 "),
            ("eu-central-1", "nginx:1.27 "),
        ]),
        || plane.per_member(ns, "deployment/web", image_and_tier),
    )
    .await;

    delete_and_await_clean(plane, ns, "deployment/web", "web-deployment").await;
}

/// Static weights 3:2:1; `kubectl scale` on the template up to 12 and down to 1.
pub async fn weighted_scale_up_and_down(plane: &ControlPlane) {
    let ns = "e2e-weighted";
    let scheduled = || {
        plane.get(
            None,
            ns,
            "resourcebinding/api-deployment",
            "{range .spec.clusters[*]}{.name}:{.replicas} {end}",
        )
    };
    let ready = || plane.get(None, ns, "deployment/api", "{.status.readyReplicas}");
    plane.apply(None, WEIGHTED).await;
    // Karmada's division of 4 by 3:2:1 (Webster): 2, 1, 1.
    await_value(
        "weighted: 4 replicas divided",
        "cn-shanghai:2 eu-central-1:1 us-west-2:1 ",
        scheduled,
    )
    .await;
    await_value(
        "weighted: members run 2/1/1",
        &expect_members(&[
            ("cn-shanghai", "2/2"),
            ("us-west-2", "1/1"),
            ("eu-central-1", "1/1"),
        ]),
        || plane.per_member(ns, "deployment/api", REPLICAS),
    )
    .await;
    await_value("weighted: template ready 4", "4", ready).await;

    plane
        .kubectl(&["-n", ns, "scale", "deployment/api", "--replicas=12"])
        .await;
    await_value(
        "scaled up to 12: members run 6/4/2",
        &expect_members(&[
            ("cn-shanghai", "6/6"),
            ("us-west-2", "4/4"),
            ("eu-central-1", "2/2"),
        ]),
        || plane.per_member(ns, "deployment/api", REPLICAS),
    )
    .await;
    await_value("scaled up: template ready 12", "12", ready).await;

    // One replica goes to the heaviest weight; members left with none lose the Deployment.
    plane
        .kubectl(&["-n", ns, "scale", "deployment/api", "--replicas=1"])
        .await;
    await_value(
        "scaled down to 1: only cn-shanghai keeps it",
        &expect_members(&[("cn-shanghai", "1/1")]),
        || plane.per_member(ns, "deployment/api", REPLICAS),
    )
    .await;
    await_value("scaled down: template ready 1", "1", ready).await;
    eventually("scaled down: only the cn-shanghai Work is left", || async {
        let works = works_of(plane, ns).await;
        let lines: Vec<&str> = works.lines().collect();
        match lines.as_slice() {
            [only] if only.starts_with("karmada-es-cn-shanghai/api-") => Ok(()),
            _ => Err(works),
        }
    })
    .await;

    delete_and_await_clean(plane, ns, "deployment/api", "api-deployment").await;
}

/// Editing the policy's clusterAffinity moves the workload: the dropped member's Deployment is
/// deleted, the added member gets one, the kept member's object is left alone.
pub async fn policy_change_replaces_the_workload(plane: &ControlPlane) {
    let ns = "e2e-replace";
    let with = |clusters: &str| REPLACE.replace("CLUSTERS", clusters);
    plane.apply(None, &with("[cn-shanghai, us-west-2]")).await;
    await_value(
        "placed on cn-shanghai and us-west-2",
        &expect_members(&[("cn-shanghai", "1/1"), ("us-west-2", "1/1")]),
        || plane.per_member(ns, "deployment/worker", REPLICAS),
    )
    .await;
    let kept_uid = plane
        .get(
            Some("us-west-2"),
            ns,
            "deployment/worker",
            "{.metadata.uid}",
        )
        .await;
    assert!(!kept_uid.is_empty());

    plane.apply(None, &with("[us-west-2, eu-central-1]")).await;
    await_value(
        "re-placed on us-west-2 and eu-central-1",
        &expect_members(&[("us-west-2", "1/1"), ("eu-central-1", "1/1")]),
        || plane.per_member(ns, "deployment/worker", REPLICAS),
    )
    .await;
    let works = works_of(plane, ns).await;
    let clusters: Vec<&str> = works
        .lines()
        .filter_map(|w| w.split_once('/').map(|(c, _)| c))
        .collect();
    assert_eq!(
        clusters,
        ["karmada-es-eu-central-1", "karmada-es-us-west-2"],
        "{works}"
    );
    assert_eq!(
        plane
            .get(
                Some("us-west-2"),
                ns,
                "deployment/worker",
                "{.metadata.uid}"
            )
            .await,
        kept_uid,
        "the member that stays selected keeps its object"
    );
    plane
        .await_events(ns, "Deployment", "worker", &["ScheduleBindingSucceed"])
        .await;

    delete_and_await_clean(plane, ns, "deployment/worker", "worker-deployment").await;
}

/// `propagateDeps`: the ConfigMap (envFrom) and Secret (volume) the Deployment references go
/// to exactly the Deployment's clusters, follow it when it moves, and leave with it.
pub async fn propagate_deps_carries_config_along(plane: &ControlPlane) {
    let ns = "e2e-deps";
    let with = |clusters: &str| DEPS.replace("CLUSTERS", clusters);
    let everything = || async {
        let mut lines = Vec::new();
        for (what, path) in [
            ("deployment/app", "{.status.readyReplicas}"),
            ("configmap/app-config", "{.data.MODE}"),
            ("secret/app-token", "{.data.token}"),
            ("configmap/unrelated", "{.data.KEEP}"),
        ] {
            lines.push(format!(
                "{what}:\n{}",
                plane.per_member(ns, what, path).await
            ));
        }
        lines.join("\n")
    };
    let expect = |on: &[&str]| {
        let with_value = |value: &'static str| {
            let values: Vec<(&str, &str)> = on.iter().map(|m| (*m, value)).collect();
            expect_members(&values)
        };
        format!(
            "deployment/app:\n{}\nconfigmap/app-config:\n{}\nsecret/app-token:\n{}\nconfigmap/unrelated:\n{}",
            with_value("1"),
            with_value("production"),
            // base64 of s3cr3t
            with_value("czNjcjN0"),
            expect_members(&[])
        )
    };
    plane
        .apply(None, &with("[cn-shanghai, eu-central-1]"))
        .await;
    await_value(
        "deps: the ConfigMap and Secret go where the Deployment goes",
        &expect(&["cn-shanghai", "eu-central-1"]),
        everything,
    )
    .await;
    await_value(
        "deps: the attached binding is required by the Deployment's binding",
        "app-deployment:cn-shanghai,eu-central-1,",
        || {
            plane.get(
                None,
                ns,
                "resourcebinding/app-config-configmap",
                "{range .spec.requiredBy[*]}{.name}:{range .clusters[*]}{.name},{end}{end}",
            )
        },
    )
    .await;

    plane.apply(None, &with("[us-west-2]")).await;
    await_value(
        "deps: they follow the Deployment to us-west-2",
        &expect(&["us-west-2"]),
        everything,
    )
    .await;

    delete_and_await_clean(plane, ns, "deployment/app", "app-deployment").await;
    await_value("deps: the attached bindings are gone", "", || {
        plane.get(
            None,
            ns,
            "resourcebindings",
            "{range .items[*]}{.metadata.name} {end}",
        )
    })
    .await;
    await_value(
        "deps: the dependencies left the members",
        &expect_members(&[]),
        || plane.per_member(ns, "configmap/app-config", "{.metadata.name}"),
    )
    .await;
    assert_eq!(
        plane
            .get(None, ns, "configmap/app-config", "{.data.MODE}")
            .await,
        "production",
        "the template ConfigMap stays on the control plane"
    );
}

/// A Deployment created directly in us-west-2 is not taken over under `conflictResolution:
/// Abort` (the binding and the Work say why) and is taken over under `Overwrite`.
pub async fn conflict_abort_then_overwrite(plane: &ControlPlane) {
    let ns = "e2e-conflict";
    plane.kubectl(&["create", "namespace", ns]).await;
    let namespace = format!("namespace/{ns}");
    await_value("conflict: the namespace reaches us-west-2", ns, || {
        plane.get(Some("us-west-2"), "default", &namespace, "{.metadata.name}")
    })
    .await;
    plane.apply(Some("us-west-2"), PREEXISTING).await;
    let member = || {
        plane.get(
            Some("us-west-2"),
            ns,
            "deployment/legacy",
            "{.spec.replicas} {.spec.template.spec.containers[0].image} {.metadata.labels.karmada\\.io/managed} {.metadata.labels.owner}",
        )
    };
    assert_eq!(member().await, "1 busybox:1.36  team-a");

    plane
        .apply(None, &CONFLICT.replace("RESOLUTION", "Abort"))
        .await;
    let refused = "resource(kind=Deployment, e2e-conflict/legacy) already exists in the cluster us-west-2 and the work.karmada.io/conflict-resolution strategy value is empty, Karmada will not manage this resource";
    eventually("abort: the binding reports the conflict", || async {
        let got = plane
            .get(
                None,
                ns,
                "resourcebinding/legacy-deployment",
                "{.status.conditions[?(@.type==\"FullyApplied\")].status} {.status.aggregatedStatus[*].clusterName} {.status.aggregatedStatus[*].appliedMessage}",
            )
            .await;
        if got.starts_with("False us-west-2 ") && got.contains(refused) {
            Ok(())
        } else {
            Err(got)
        }
    })
    .await;
    let work = plane
        .get(
            None,
            "karmada-es-us-west-2",
            "works",
            "{range .items[?(@.metadata.annotations.resourcebinding\\.karmada\\.io/name==\"legacy-deployment\")]}{.metadata.name}{end}",
        )
        .await;
    assert!(work.starts_with("legacy-"), "the Work: {work:?}");
    let work_ref = format!("work/{work}");
    await_value(
        "abort: the Work's Applied condition is False",
        "False AppliedFailed",
        || {
            plane.get(
                None,
                "karmada-es-us-west-2",
                &work_ref,
                "{.status.conditions[?(@.type==\"Applied\")].status} {.status.conditions[?(@.type==\"Applied\")].reason}",
            )
        },
    )
    .await;
    plane
        .await_events(
            "karmada-es-us-west-2",
            "Work",
            &work,
            &["SyncWorkloadFailed"],
        )
        .await;
    assert_eq!(
        member().await,
        "1 busybox:1.36  team-a",
        "abort leaves the member's own object alone"
    );

    plane
        .apply(None, &CONFLICT.replace("RESOLUTION", "Overwrite"))
        .await;
    await_value(
        "overwrite: the member object is taken over (its own label kept)",
        "2 nginx:1.27 true team-a",
        member,
    )
    .await;
    await_value("overwrite: binding conditions", "True True", || {
        binding_conditions(plane, ns, "legacy-deployment")
    })
    .await;
    await_value("overwrite: template ready", "2", || {
        plane.get(None, ns, "deployment/legacy", "{.status.readyReplicas}")
    })
    .await;

    delete_and_await_clean(plane, ns, "deployment/legacy", "legacy-deployment").await;
}

/// Karmada's "NodePort Service collection testing": the control plane allocates the node port
/// (as kube-apiserver does), the Works carry it (only the cluster IP is pruned), and every member
/// serves the Service on that same port, each with a cluster IP of its own.
pub async fn node_port_is_the_same_in_every_member(plane: &ControlPlane) {
    let ns = "e2e-nodeport";
    plane.kubectl(&["create", "namespace", ns]).await;
    let manifest = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: web, namespace: {ns}}}\n\
         spec: {{type: NodePort, selector: {{app: web}}, ports: [{{port: 80, targetPort: 8080}}]}}\n\
         ---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n\
         metadata: {{name: web, namespace: {ns}}}\n\
         spec:\n  resourceSelectors: [{{apiVersion: v1, kind: Service, name: web}}]\n  \
         placement: {{clusterAffinity: {{clusterNames: [{}]}}}}\n",
        MEMBERS.join(", ")
    );
    plane.apply(None, &manifest).await;
    let template = plane
        .get(
            None,
            ns,
            "service/web",
            "{.spec.ports[0].nodePort} {.spec.clusterIP}",
        )
        .await;
    let (node_port, cluster_ip) = template.split_once(' ').expect("port and address");
    let port: u16 = node_port.parse().expect("a node port");
    assert!((30000..=32767).contains(&port), "{template}");
    let want: Vec<(&str, &str)> = MEMBERS.iter().map(|m| (*m, node_port)).collect();
    await_value(
        "nodeport: every member serves the template's node port",
        &expect_members(&want),
        || plane.per_member(ns, "service/web", "{.spec.ports[0].nodePort}"),
    )
    .await;
    let addresses = plane
        .per_member(ns, "service/web", "{.spec.clusterIP}")
        .await;
    assert!(cluster_ip.starts_with("10.96."), "{template}");
    assert!(
        addresses.lines().all(|l| l
            .split_once('=')
            .is_some_and(|(_, ip)| ip.starts_with("10.96."))),
        "the Works leave the address out and each member allocates one: {addresses}"
    );
    delete_and_await_clean(plane, ns, "service/web", "web-service").await;
}

/// Someone scales, relabels and then deletes the member's Deployment: Flotilla restores it.
pub async fn drift_in_a_member_is_repaired(plane: &ControlPlane) {
    let ns = "e2e-drift";
    let member = || {
        plane.get(
            Some("us-west-2"),
            ns,
            "deployment/cache",
            "{.spec.replicas} {.metadata.labels.app}",
        )
    };
    plane.apply(None, DRIFT).await;
    await_value("drift: propagated", "3 cache", member).await;

    plane
        .kubectl(&[
            "--context",
            "us-west-2",
            "-n",
            ns,
            "scale",
            "deployment/cache",
            "--replicas=7",
        ])
        .await;
    await_value("drift: a member scale is reverted", "3 cache", member).await;

    plane
        .kubectl(&[
            "--context",
            "us-west-2",
            "-n",
            ns,
            "label",
            "deployment/cache",
            "app=hacked",
            "--overwrite",
        ])
        .await;
    await_value("drift: a member relabel is reverted", "3 cache", member).await;

    let uid = plane
        .get(Some("us-west-2"), ns, "deployment/cache", "{.metadata.uid}")
        .await;
    plane
        .kubectl(&[
            "--context",
            "us-west-2",
            "-n",
            ns,
            "delete",
            "deployment/cache",
        ])
        .await;
    eventually("drift: a deleted member object is recreated", || async {
        let got = plane
            .get(
                Some("us-west-2"),
                ns,
                "deployment/cache",
                "{.metadata.uid} {.spec.replicas}/{.status.readyReplicas}",
            )
            .await;
        match got.split_once(' ') {
            Some((new_uid, "3/3")) if new_uid != uid => Ok(()),
            _ => Err(got),
        }
    })
    .await;

    delete_and_await_clean(plane, ns, "deployment/cache", "cache-deployment").await;
}

/// After every scenario cleaned up: no Work, binding or member Deployment of any e2e namespace.
pub async fn nothing_left_behind(plane: &ControlPlane) {
    let works = plane
        .kubectl(&[
            "get",
            "works",
            "--all-namespaces",
            "-o",
            "jsonpath={range .items[*]}{.metadata.annotations.resourcebinding\\.karmada\\.io/namespace}/{.metadata.name}{\"\\n\"}{end}",
        ])
        .await;
    let left: Vec<&str> = works.lines().filter(|w| w.starts_with("e2e-")).collect();
    assert!(left.is_empty(), "Works left: {left:?}");
    let bindings = plane
        .kubectl(&["get", "resourcebindings", "--all-namespaces", "-o", "name"])
        .await;
    assert_eq!(bindings, "", "bindings left");
    for member in MEMBERS {
        let deployments = plane
            .kubectl(&[
                "--context",
                member,
                "get",
                "deployments",
                "--all-namespaces",
                "-o",
                "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {end}",
            ])
            .await;
        assert!(
            !deployments.contains("e2e-"),
            "{member} still runs {deployments}"
        );
    }
}
