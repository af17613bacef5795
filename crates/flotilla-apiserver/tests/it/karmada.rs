//! Karmada's admission through the HTTP API: the project's examples are stored with the
//! defaults Karmada's CRDs and webhooks give them, re-writing them changes nothing, and
//! policies Karmada would refuse are refused with its messages as 422 Invalid naming the field.

use flotilla_apiserver::Running;
use http::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const PPS: &str = "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies";
const OPS: &str = "/apis/policy.karmada.io/v1alpha1/namespaces/default/overridepolicies";
const CLUSTERS: &str = "/apis/cluster.karmada.io/v1alpha1/clusters";
const WORKS: &str = "/apis/work.karmada.io/v1alpha1/namespaces/karmada-es-m1/works";

/// The YAML documents of one file under the repository's `examples/`.
fn example(path: &str) -> Vec<String> {
    let file = format!("{}/../../examples/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
    text.split("\n---")
        .map(str::to_owned)
        .filter(|d| d.lines().any(|l| l.starts_with("kind:")))
        .collect()
}

fn collection(document: &str) -> &'static str {
    let kind = document
        .lines()
        .find_map(|l| l.strip_prefix("kind:"))
        .map(str::trim)
        .unwrap_or("");
    match kind {
        "Deployment" => "/apis/apps/v1/namespaces/default/deployments",
        "PropagationPolicy" => PPS,
        "OverridePolicy" => OPS,
        other => panic!("no collection for {other}"),
    }
}

async fn create_yaml(cp: &Running, document: &str) -> Value {
    let reply = send(
        cp,
        with_body(
            "POST",
            collection(document),
            "application/yaml",
            document.to_owned(),
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.body
}

fn assert_uuid(value: &Value) {
    let id = value.as_str().unwrap_or_else(|| panic!("no id: {value}"));
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
}

fn assert_policy_defaults(policy: &Value) {
    let spec = &policy["spec"];
    assert_eq!(spec["priority"], 0, "{policy}");
    assert_eq!(spec["preemption"], "Never");
    assert_eq!(spec["conflictResolution"], "Abort");
    assert_eq!(spec["schedulerName"], "default-scheduler");
    for selector in spec["resourceSelectors"].as_array().expect("selectors") {
        assert_eq!(selector["namespace"], "default");
    }
    assert_uuid(&policy["metadata"]["labels"]["propagationpolicy.karmada.io/permanent-id"]);
    assert_eq!(
        policy["metadata"]["finalizers"],
        json!(["karmada.io/propagation-policy-controller"])
    );
}

/// PUT back what was read: nothing changes (no new resourceVersion, generation still 1).
async fn assert_rewrite_is_no_change(cp: &Running, url: &str) {
    let stored = send(cp, get(url)).await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    let replaced = send(cp, json("PUT", url, &stored.body)).await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    assert_eq!(replaced.body, stored.body);
    assert_eq!(replaced.body["metadata"]["generation"], 1);
}

#[tokio::test]
async fn examples_are_stored_with_karmada_defaults() {
    let cp = control_plane().await;
    for document in example("nginx/nginx.yaml") {
        create_yaml(&cp, &document).await;
    }
    let nginx = send(&cp, get(&format!("{PPS}/nginx-propagation"))).await;
    assert_policy_defaults(&nginx.body);
    assert_rewrite_is_no_change(&cp, &format!("{PPS}/nginx-propagation")).await;

    for file in [
        "vllm/deployment.yaml",
        "vllm/propagationpolicy.yaml",
        "vllm/overridepolicy.yaml",
    ] {
        for document in example(file) {
            create_yaml(&cp, &document).await;
        }
    }
    let vllm = send(&cp, get(&format!("{PPS}/vllm-propagation"))).await;
    assert_policy_defaults(&vllm.body);
    assert_eq!(
        vllm.body["spec"]["placement"]["replicaScheduling"]["replicaDivisionPreference"],
        "Weighted"
    );
    assert_rewrite_is_no_change(&cp, &format!("{PPS}/vllm-propagation")).await;
    let op = send(&cp, get(&format!("{OPS}/vllm-regional"))).await;
    assert_eq!(
        op.body["spec"]["resourceSelectors"][0]["namespace"],
        "default"
    );
    assert_rewrite_is_no_change(&cp, &format!("{OPS}/vllm-regional")).await;
}

#[tokio::test]
async fn webhook_defaults_fill_spread_and_division() {
    let cp = control_plane().await;
    let policy = json!({"metadata": {"name": "spread"}, "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
        "placement": {"replicaScheduling": {}, "spreadConstraints": [{"maxGroups": 2}]},
    }});
    let created = send(&cp, json("POST", PPS, &policy)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let placement = &created.body["spec"]["placement"];
    assert_eq!(
        placement["replicaScheduling"],
        json!({"replicaSchedulingType": "Divided", "replicaDivisionPreference": "Weighted"})
    );
    assert_eq!(
        placement["spreadConstraints"],
        json!([{"spreadByField": "cluster", "minGroups": 1, "maxGroups": 2}])
    );
}

/// The 422 reply's causes as `(field, message)`.
fn causes(reply: &Reply) -> Vec<(String, String)> {
    reply.body["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["field"].as_str().unwrap_or("").to_owned(),
                c["message"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn invalid_policies_are_rejected_naming_the_field() {
    let cp = control_plane().await;
    let policy = json!({"metadata": {"name": "bad"}, "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
        "placement": {"spreadConstraints": [{"spreadByField": "region", "maxGroups": 2}]},
    }});
    let reply = send(&cp, json("POST", PPS, &policy)).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["reason"], "Invalid");
    assert_eq!(
        reply.body["details"]["kind"], "PropagationPolicy",
        "kubectl prints `The PropagationPolicy \"bad\" is invalid`"
    );
    let message = reply.body["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("PropagationPolicy.policy.karmada.io \"bad\" is invalid: spec.placement.spreadConstraints: Invalid value: "),
        "{message}"
    );
    let found = causes(&reply);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "spec.placement.spreadConstraints");
    assert!(found[0].1.ends_with(
        "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled"
    ));
    let missing = send(&cp, get(&format!("{PPS}/bad"))).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "nothing stored");

    let other_namespace = json!({"metadata": {"name": "ns"}, "spec": {
        "resourceSelectors": [{"apiVersion": "v1", "kind": "ConfigMap", "namespace": "kube-system"}],
        "conflictResolution": "Ignore",
    }});
    let reply = send(&cp, json("POST", PPS, &other_namespace)).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        causes(&reply),
        [(
            "spec.conflictResolution".to_owned(),
            "Unsupported value: \"Ignore\": supported values: \"Abort\", \"Overwrite\"".to_owned()
        )],
        "schema errors come first"
    );
    let mut fixed = other_namespace.clone();
    fixed["spec"]["conflictResolution"] = "Overwrite".into();
    let reply = send(&cp, json("POST", PPS, &fixed)).await;
    assert_eq!(
        causes(&reply),
        [(
            "spec.resourceSelectors[0].namespace".to_owned(),
            "Invalid value: \"kube-system\": namespace of resource selector must be the same as the namespace of the policy".to_owned()
        )]
    );
}

#[tokio::test]
async fn permanent_id_and_scheduler_name_cannot_change() {
    let cp = control_plane().await;
    let policy = json!({"metadata": {"name": "p"}, "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]}});
    let created = send(&cp, json("POST", PPS, &policy)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let mut relabelled = created.body.clone();
    relabelled["metadata"]["labels"]["propagationpolicy.karmada.io/permanent-id"] = "mine".into();
    let reply = send(&cp, json("PUT", &format!("{PPS}/p"), &relabelled)).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(
        causes(&reply)[0].0,
        "metadata.labels[propagationpolicy.karmada.io/permanent-id]"
    );
    let patch = r#"{"spec":{"schedulerName":"other"}}"#;
    let reply = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{PPS}/p"),
            "application/merge-patch+json",
            patch,
        ),
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(
        causes(&reply),
        [(
            "spec.schedulerName".to_owned(),
            "Forbidden: the schedulerName should not be updated".to_owned()
        )]
    );
    // A real change bumps the generation; the id stays.
    let patch = r#"{"spec":{"priority":5}}"#;
    let reply = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{PPS}/p"),
            "application/merge-patch+json",
            patch,
        ),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["metadata"]["generation"], 2);
    assert_eq!(
        reply.body["metadata"]["labels"],
        created.body["metadata"]["labels"]
    );
}

#[tokio::test]
async fn clusters_follow_the_aggregated_apiserver_strategy() {
    let cp = control_plane().await;
    let cluster = json!({"metadata": {"name": "m1"}, "spec": {
        "syncMode": "Push", "apiEndpoint": "https://10.0.0.1:6443", "zone": "z1",
        "taints": [{"key": "cluster.karmada.io/not-ready", "effect": "NoExecute"}]},
        "status": {"kubernetesVersion": "v1.30.0"}});
    let created = send(&cp, json("POST", CLUSTERS, &cluster)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let spec = &created.body["spec"];
    assert_eq!(spec["zones"], json!(["z1"]));
    assert!(spec.get("zone").is_none());
    assert!(spec["taints"][0]["timeAdded"].is_string(), "{spec}");
    assert_eq!(spec["resourceModels"].as_array().map(Vec::len), Some(9));
    assert!(
        created.body.get("status").is_none(),
        "status is cleared on create"
    );
    assert_eq!(created.body["metadata"]["generation"], 1);
    assert_rewrite_is_no_change(&cp, &format!("{CLUSTERS}/m1")).await;

    let invalid = json!({"metadata": {"name": "Member_2"}, "spec": {"syncMode": "Sideways"}});
    let reply = send(&cp, json("POST", CLUSTERS, &invalid)).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    let fields: Vec<String> = causes(&reply).into_iter().map(|(f, _)| f).collect();
    assert_eq!(fields, ["metadata.name", "spec.syncMode"]);
}

#[tokio::test]
async fn works_are_pruned_and_stamped() {
    let cp = control_plane().await;
    let namespace = json!({"metadata": {"name": "karmada-es-m1"}});
    let reply = send(&cp, json("POST", "/api/v1/namespaces", &namespace)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let work = json!({"metadata": {"name": "nginx-687f7fb96f"}, "spec": {"workload": {"manifests": [
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "nginx", "namespace": "default", "uid": "u", "resourceVersion": "9"},
         "spec": {"replicas": 2}, "status": {"replicas": 2}}
    ]}}});
    let created = send(&cp, json("POST", WORKS, &work)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let id = &created.body["metadata"]["labels"]["work.karmada.io/permanent-id"];
    assert_uuid(id);
    let manifest = &created.body["spec"]["workload"]["manifests"][0];
    assert!(manifest.get("status").is_none());
    assert!(manifest["metadata"].get("uid").is_none());
    assert_eq!(
        manifest["metadata"]["labels"]["work.karmada.io/permanent-id"],
        *id
    );
    assert_eq!(
        manifest["metadata"]["annotations"]["resourcetemplate.karmada.io/managed-labels"],
        "work.karmada.io/permanent-id"
    );
    assert_rewrite_is_no_change(&cp, &format!("{WORKS}/nginx-687f7fb96f")).await;
}

#[tokio::test]
async fn federated_hpas_get_hpa_defaults() {
    let cp = control_plane().await;
    let url = "/apis/autoscaling.karmada.io/v1alpha1/namespaces/default/federatedhpas";
    let fhpa = json!({"metadata": {"name": "h"}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5}});
    let created = send(&cp, json("POST", url, &fhpa)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["spec"]["minReplicas"], 1);
    assert_eq!(
        created.body["spec"]["metrics"][0]["resource"]["name"],
        "cpu"
    );
    let bad = json!({"metadata": {"name": "b"}, "spec": {
        "scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 4, "maxReplicas": 2}});
    let reply = send(&cp, json("POST", url, &bad)).await;
    assert_eq!(
        causes(&reply),
        [(
            "spec.maxReplicas".to_owned(),
            "Invalid value: 2: must be greater than or equal to `minReplicas`".to_owned()
        )]
    );
}

#[tokio::test]
async fn cluster_generation_moves_with_the_spec_only() {
    let cp = control_plane().await;
    let cluster = json!({"metadata": {"name": "m2"}, "spec": {"syncMode": "Pull"}});
    let created = send(&cp, json("POST", CLUSTERS, &cluster)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    let mut with_status = created.body.clone();
    with_status["status"] = json!({"kubernetesVersion": "v1.30.0"});
    with_status["spec"]["region"] = "ignored-through-status".into();
    let status = send(
        &cp,
        json("PUT", &format!("{CLUSTERS}/m2/status"), &with_status),
    )
    .await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.body);
    assert_eq!(status.body["status"]["kubernetesVersion"], "v1.30.0");
    assert_eq!(status.body["metadata"]["generation"], 1);
    assert!(status.body["spec"].get("region").is_none());

    let mut moved = status.body.clone();
    moved["spec"]["region"] = "eu".into();
    moved["status"] = json!({});
    let updated = send(&cp, json("PUT", &format!("{CLUSTERS}/m2"), &moved)).await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.body);
    assert_eq!(updated.body["metadata"]["generation"], 2);
    assert_eq!(
        updated.body["status"]["kubernetesVersion"], "v1.30.0",
        "status kept"
    );
    assert_eq!(
        updated.body["spec"]["resourceModels"], created.body["spec"]["resourceModels"],
        "models given back are kept as they are"
    );
}

#[tokio::test]
async fn quota_and_taint_policies_are_validated() {
    let cp = control_plane().await;
    let quotas = "/apis/policy.karmada.io/v1alpha1/namespaces/default/federatedresourcequotas";
    let quota = json!({"metadata": {"name": "q"}, "spec": {
        "overall": {"cpu": "2"},
        "staticAssignments": [{"clusterName": "m1", "hard": {"cpu": "3"}}]}});
    let reply = send(&cp, json("POST", quotas, &quota)).await;
    assert_eq!(
        causes(&reply),
        [(
            "spec.overall[cpu]".to_owned(),
            "Invalid value: \"2\": overall is less than assignments".to_owned()
        )]
    );
    let policies = "/apis/policy.karmada.io/v1alpha1/clustertaintpolicies";
    let policy = json!({"metadata": {"name": "t"}, "spec": {
        "taints": [{"key": "k", "effect": "NoExecute"}]}});
    let reply = send(&cp, json("POST", policies, &policy)).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(causes(&reply)[0].0, "spec.taints[0]");
    let mut allowed = policy.clone();
    allowed["spec"]["taints"][0]["effect"] = "NoSchedule".into();
    let reply = send(&cp, json("POST", policies, &allowed)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
}

#[tokio::test]
async fn resource_registries_are_served_as_karmada_search_serves_them() {
    const REGISTRIES: &str = "/apis/search.karmada.io/v1alpha1/resourceregistries";
    let cp = control_plane().await;
    let registry = json!({"metadata": {"name": "proxy-sample"}, "spec": {
        "targetCluster": {"clusterNames": ["member1", "member2"]},
        "resourceSelectors": [
            {"apiVersion": "apps/v1", "kind": "Deployment"},
            {"apiVersion": "v1", "kind": "Pod", "namespace": "default"}],
        "backendStore": {"openSearch": {
            "addresses": ["https://opensearch.karmada-system:9200"], "secretRef": {"name": "os-auth"}}}}});
    let created = send(&cp, json("POST", REGISTRIES, &registry)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["apiVersion"], "search.karmada.io/v1alpha1");
    assert_eq!(created.body["kind"], "ResourceRegistry");
    assert_eq!(created.body["spec"], registry["spec"], "stored as sent");
    assert!(
        created.body["metadata"].get("generation").is_none(),
        "karmada-search keeps no generation"
    );
    assert!(created.body["metadata"].get("namespace").is_none());
    let url = format!("{REGISTRIES}/proxy-sample");
    let read = send(&cp, get(&url)).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body, created.body);
    let list = send(&cp, get(REGISTRIES)).await;
    assert_eq!(list.body["kind"], "ResourceRegistryList", "{}", list.body);
    assert_eq!(list.body["items"][0]["metadata"]["name"], "proxy-sample");

    // Status through its subresource; the spec stays as it was.
    let mut with_status = read.body.clone();
    with_status["status"] = json!({"conditions": [{"type": "Ready", "status": "True",
        "reason": "Synced", "message": "", "lastTransitionTime": "2026-01-02T03:04:05Z"}]});
    with_status["spec"]["resourceSelectors"] = json!([]);
    let status = send(&cp, json("PUT", &format!("{url}/status"), &with_status)).await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.body);
    assert_eq!(status.body["status"]["conditions"][0]["type"], "Ready");
    assert_eq!(status.body["spec"], registry["spec"]);

    // kube's default table, as karmada-search prints it.
    let mut request = get(REGISTRIES);
    request.headers_mut().insert(
        http::header::ACCEPT,
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
            .parse()
            .expect("header"),
    );
    let table = send(&cp, request).await;
    let columns: Vec<&str> = table.body["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(columns, ["Name", "Created At"], "{}", table.body);

    let invalid = json!({"metadata": {"name": "Bad_Registry"}, "spec": {
        "resourceSelectors": [{"apiVersion": "apps/v1/extra", "kind": "Deployment", "namespace": "Bad_Namespace"}],
        "backendStore": {"openSearch": {"addresses": ["localhost:9200"], "secretRef": {"name": "os-auth"}}}}});
    let reply = send(&cp, json("POST", REGISTRIES, &invalid)).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["reason"], "Invalid");
    assert_eq!(reply.body["details"]["group"], "search.karmada.io");
    assert_eq!(reply.body["details"]["kind"], "ResourceRegistry");
    let message = reply.body["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("ResourceRegistry.search.karmada.io \"Bad_Registry\" is invalid: ["),
        "{message}"
    );
    let found = causes(&reply);
    let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        [
            "metadata.name",
            "spec.resourceSelectors[0].apiVersion",
            "spec.resourceSelectors[0].namespace",
            "spec.backendStore.openSearch.addresses[0]",
        ],
        "{found:?}"
    );
    assert_eq!(
        found[1].1,
        "Invalid value: \"apps/v1/extra\": unexpected GroupVersion string: apps/v1/extra"
    );
    assert_eq!(
        found[3].1,
        "Invalid value: \"localhost:9200\": must be a valid http or https URL with non-empty scheme and host"
    );
    let missing = send(&cp, get(&format!("{REGISTRIES}/Bad_Registry"))).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "nothing stored");

    // An update is validated as a create is.
    let mut updated = status.body.clone();
    updated["spec"]["resourceSelectors"][0]["apiVersion"] = "a/b/c".into();
    let reply = send(&cp, json("PUT", &url, &updated)).await;
    assert_eq!(
        causes(&reply),
        [(
            "spec.resourceSelectors[0].apiVersion".to_owned(),
            "Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c".to_owned()
        )]
    );
}
