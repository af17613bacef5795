//! CRUD over raw HTTP: status codes, error shapes, metadata rules, patches, subresources.

use http::StatusCode;
use serde_json::json;

use crate::support::*;

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

#[tokio::test]
async fn create_get_list_update_delete_with_kubernetes_metadata() {
    let cp = control_plane().await;
    let created = send(&cp, json("POST", DEPLOYMENTS, &deployment("web", 2))).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let meta = &created.body["metadata"];
    assert_eq!(meta["namespace"], "default");
    assert_eq!(meta["generation"], 1);
    assert!(meta["uid"].as_str().is_some_and(|u| u.len() == 36));
    assert!(
        meta["creationTimestamp"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    let rv: i64 = meta["resourceVersion"]
        .as_str()
        .expect("rv")
        .parse()
        .expect("number");

    let got = send(&cp, get(&format!("{DEPLOYMENTS}/web"))).await;
    assert_eq!(got.body["metadata"]["resourceVersion"], rv.to_string());
    // A GET serves the stored bytes: the object the create answered, and the list's item.
    assert_eq!(got.body, created.body);

    let list = send(&cp, get(DEPLOYMENTS)).await;
    assert_eq!(list.body["kind"], "DeploymentList");
    assert_eq!(list.body["items"].as_array().expect("items").len(), 1);
    let mut item = list.body["items"][0].clone();
    item.as_object_mut()
        .expect("item")
        .insert("apiVersion".into(), "apps/v1".into());
    item.as_object_mut()
        .expect("item")
        .insert("kind".into(), "Deployment".into());
    assert_eq!(item, got.body);
    assert!(list.body["metadata"]["resourceVersion"].as_str().is_some());

    // An update with a stale resourceVersion is a 409 Conflict.
    let mut stale = created.body.clone();
    stale["spec"]["replicas"] = 5.into();
    let first = send(&cp, json("PUT", &format!("{DEPLOYMENTS}/web"), &stale)).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(
        first.body["metadata"]["generation"], 2,
        "spec change bumps generation"
    );
    let second = send(&cp, json("PUT", &format!("{DEPLOYMENTS}/web"), &stale)).await;
    assert_eq!(second.status, StatusCode::CONFLICT);
    assert_eq!(second.body["reason"], "Conflict");
    assert!(
        second.body["message"]
            .as_str()
            .expect("message")
            .contains("the object has been modified")
    );

    // A metadata-only change keeps the generation.
    let mut labelled = first.body.clone();
    labelled["metadata"]["labels"]["tier"] = "front".into();
    let labelled = send(&cp, json("PUT", &format!("{DEPLOYMENTS}/web"), &labelled)).await;
    assert_eq!(labelled.body["metadata"]["generation"], 2);

    let deleted = send(
        &cp,
        with_body(
            "DELETE",
            &format!("{DEPLOYMENTS}/web"),
            "application/json",
            r#"{"propagationPolicy":"Background"}"#,
        ),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.body);
    let gone = send(&cp, get(&format!("{DEPLOYMENTS}/web"))).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    assert_eq!(gone.body["message"], "deployments.apps \"web\" not found");
    assert_eq!(gone.body["details"]["kind"], "deployments");
}

#[tokio::test]
async fn errors_are_statuses_naming_the_problem() {
    let cp = control_plane().await;
    let again = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "default"}}),
        ),
    )
    .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert_eq!(again.body["reason"], "AlreadyExists");

    let bad_name = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "Bad_Name"}}),
        ),
    )
    .await;
    assert_eq!(
        bad_name.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        bad_name.body
    );
    assert_eq!(bad_name.body["reason"], "Invalid");
    assert_eq!(
        bad_name.body["details"]["causes"][0]["field"],
        "metadata.name"
    );

    let mut no_selector = deployment("nosel", 1);
    no_selector["spec"]
        .as_object_mut()
        .expect("spec")
        .remove("selector");
    let invalid = send(&cp, json("POST", DEPLOYMENTS, &no_selector)).await;
    assert_eq!(invalid.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        invalid.body["message"]
            .as_str()
            .expect("message")
            .contains("spec.selector: Required value"),
        "{}",
        invalid.body
    );

    let mut mismatch = deployment("mismatch", 1);
    mismatch["spec"]["selector"]["matchLabels"]["app"] = "other".into();
    let invalid = send(&cp, json("POST", DEPLOYMENTS, &mismatch)).await;
    assert!(
        invalid.body["message"]
            .as_str()
            .expect("message")
            .contains("`selector` does not match template `labels`"),
        "{}",
        invalid.body
    );

    let malformed = send(
        &cp,
        with_body("POST", DEPLOYMENTS, "application/json", "{not json"),
    )
    .await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    let media = send(&cp, with_body("POST", DEPLOYMENTS, "text/plain", "x")).await;
    assert_eq!(media.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let big = send(
        &cp,
        with_body(
            "POST",
            DEPLOYMENTS,
            "application/json",
            vec![b' '; 3 * 1024 * 1024 + 10],
        ),
    )
    .await;
    assert_eq!(big.status, StatusCode::PAYLOAD_TOO_LARGE);
    let unknown = send(&cp, get("/apis/apps/v1/namespaces/default/widgets")).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert!(
        unknown.body["message"]
            .as_str()
            .expect("message")
            .contains("widgets")
    );
    let selector = send(
        &cp,
        get(&format!("{DEPLOYMENTS}?labelSelector=app%20in%20(a")),
    )
    .await;
    assert_eq!(
        selector.status,
        StatusCode::BAD_REQUEST,
        "{}",
        selector.body
    );
    let no_ns = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/missing/configmaps",
            &json!({"metadata": {"name": "x"}}),
        ),
    )
    .await;
    assert_eq!(no_ns.status, StatusCode::NOT_FOUND);
    assert_eq!(no_ns.body["message"], "namespaces \"missing\" not found");
    // Nothing was stored by any of the failed requests.
    let list = send(&cp, get(DEPLOYMENTS)).await;
    assert_eq!(list.body["items"].as_array().expect("items").len(), 0);
}

#[tokio::test]
async fn generate_name_dry_run_and_selectors() {
    let cp = control_plane().await;
    let body =
        json!({"metadata": {"generateName": "cfg-", "labels": {"tier": "a"}}, "data": {"k": "v"}});
    let created = send(
        &cp,
        json("POST", "/api/v1/namespaces/default/configmaps", &body),
    )
    .await;
    let name = created.body["metadata"]["name"].as_str().expect("name");
    assert!(name.starts_with("cfg-") && name.len() == 9, "{name}");
    let dry = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps?dryRun=All",
            &json!({"metadata": {"name": "dry"}}),
        ),
    )
    .await;
    assert_eq!(dry.status, StatusCode::CREATED);
    assert_eq!(
        send(&cp, get("/api/v1/namespaces/default/configmaps/dry"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "other", "labels": {"tier": "b"}}}),
        ),
    )
    .await;
    let selected = send(
        &cp,
        get("/api/v1/namespaces/default/configmaps?labelSelector=tier%20in%20(a)"),
    )
    .await;
    let items = selected.body["items"].as_array().expect("items");
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["metadata"]["name"], name);
    let by_name = send(
        &cp,
        get("/api/v1/configmaps?fieldSelector=metadata.name%3Dother"),
    )
    .await;
    assert_eq!(by_name.body["items"].as_array().expect("items").len(), 1);
    let unsupported = send(&cp, get("/api/v1/configmaps?fieldSelector=spec.nope%3Dx")).await;
    assert_eq!(unsupported.status, StatusCode::BAD_REQUEST);
    assert!(
        unsupported.body["message"]
            .as_str()
            .expect("msg")
            .contains("field label not supported")
    );
}

#[tokio::test]
async fn paging_with_limit_and_continue_is_consistent() {
    let cp = control_plane().await;
    for i in 0..7 {
        send(
            &cp,
            json(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                &json!({"metadata": {"name": format!("c{i}")}}),
            ),
        )
        .await;
    }
    let first = send(&cp, get("/api/v1/namespaces/default/configmaps?limit=3")).await;
    let token = first.body["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_owned();
    let rv = first.body["metadata"]["resourceVersion"].clone();
    // A write between pages does not show up in later pages.
    send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            &json!({"metadata": {"name": "c9"}}),
        ),
    )
    .await;
    let mut names: Vec<String> = first.body["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().expect("n").to_owned())
        .collect();
    let mut token = Some(token);
    while let Some(t) = token {
        let page = send(
            &cp,
            get(&format!(
                "/api/v1/namespaces/default/configmaps?limit=3&continue={t}"
            )),
        )
        .await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        assert_eq!(page.body["metadata"]["resourceVersion"], rv);
        names.extend(
            page.body["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i["metadata"]["name"].as_str().expect("n").to_owned()),
        );
        token = page.body["metadata"]["continue"]
            .as_str()
            .map(str::to_owned);
    }
    assert_eq!(names, ["c0", "c1", "c2", "c3", "c4", "c5", "c6"]);
}

#[tokio::test]
async fn patches_status_and_scale() {
    let cp = control_plane().await;
    send(&cp, json("POST", DEPLOYMENTS, &deployment("web", 2))).await;
    let url = format!("{DEPLOYMENTS}/web");
    // Strategic merge keeps the container's ports while changing its image.
    let smp = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "main"}], "containers": [{"name": "main", "image": "nginx:1.28"}]}}}});
    let patched = send(
        &cp,
        with_body(
            "PATCH",
            &url,
            "application/strategic-merge-patch+json",
            smp.to_string(),
        ),
    )
    .await;
    assert_eq!(patched.status, StatusCode::OK, "{}", patched.body);
    let container = &patched.body["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "nginx:1.28");
    assert_eq!(container["ports"][0]["containerPort"], 80);
    // Merge and JSON patches.
    let merged = send(
        &cp,
        with_body(
            "PATCH",
            &url,
            "application/merge-patch+json",
            r#"{"metadata":{"labels":{"x":"y"}}}"#,
        ),
    )
    .await;
    assert_eq!(merged.body["metadata"]["labels"]["x"], "y");
    let jsonp = send(
        &cp,
        with_body(
            "PATCH",
            &url,
            "application/json-patch+json",
            r#"[{"op":"replace","path":"/spec/replicas","value":4}]"#,
        ),
    )
    .await;
    assert_eq!(jsonp.body["spec"]["replicas"], 4);
    let bad = send(
        &cp,
        with_body(
            "PATCH",
            &url,
            "application/json-patch+json",
            r#"[{"op":"test","path":"/spec/replicas","value":9}]"#,
        ),
    )
    .await;
    assert!(bad.status.is_client_error(), "{}", bad.body);
    // Status only through /status; the main resource ignores status.
    let status = json!({"status": {"replicas": 4, "readyReplicas": 3}, "spec": {"replicas": 100},
        "metadata": {"labels": {"x": "changed"}}, "extra": {"a": 1}});
    let with_status = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{url}/status"),
            "application/merge-patch+json",
            status.to_string(),
        ),
    )
    .await;
    assert_eq!(with_status.body["status"]["readyReplicas"], 3);
    assert_eq!(
        with_status.body["spec"]["replicas"], 4,
        "spec ignored on /status"
    );
    assert_eq!(
        with_status.body["metadata"]["labels"]["x"], "y",
        "metadata ignored on /status"
    );
    assert!(
        with_status.body.get("extra").is_none(),
        "{}",
        with_status.body
    );
    // A patch of status alone (the members' and controllers' status writes): the rest stays,
    // and one that changes nothing stores nothing.
    let status_only = |body: &'static str| {
        with_body(
            "PATCH",
            &format!("{url}/status"),
            "application/merge-patch+json",
            body,
        )
    };
    let ready = send(&cp, status_only(r#"{"status":{"availableReplicas":3}}"#)).await;
    assert_eq!(ready.status, StatusCode::OK, "{}", ready.body);
    assert_eq!(ready.body["status"]["availableReplicas"], 3);
    assert_eq!(ready.body["status"]["readyReplicas"], 3);
    assert_eq!(ready.body["status"]["replicas"], 4);
    assert_eq!(ready.body["spec"]["replicas"], 4);
    assert_eq!(ready.body["metadata"]["labels"]["x"], "y");
    assert_eq!(
        ready.body["metadata"]["generation"],
        with_status.body["metadata"]["generation"]
    );
    let again = send(&cp, status_only(r#"{"status":{"availableReplicas":3}}"#)).await;
    assert_eq!(
        again.body["metadata"]["resourceVersion"], ready.body["metadata"]["resourceVersion"],
        "nothing changed, nothing stored"
    );
    let ignored = send(
        &cp,
        with_body(
            "PATCH",
            &url,
            "application/merge-patch+json",
            r#"{"status":{"readyReplicas":0}}"#,
        ),
    )
    .await;
    assert_eq!(
        ignored.body["status"]["readyReplicas"], 3,
        "status ignored on the main resource"
    );
    // Scale.
    let scale = send(&cp, get(&format!("{url}/scale"))).await;
    assert_eq!(scale.body["kind"], "Scale");
    assert_eq!(scale.body["apiVersion"], "autoscaling/v1");
    assert_eq!(scale.body["spec"]["replicas"], 4);
    let scaled = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{url}/scale"),
            "application/merge-patch+json",
            r#"{"spec":{"replicas":7}}"#,
        ),
    )
    .await;
    assert_eq!(scaled.body["kind"], "Scale");
    assert_eq!(send(&cp, get(&url)).await.body["spec"]["replicas"], 7);
    // Strategic merge on a Karmada kind is refused.
    send(&cp, json("POST", "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", &json!({"metadata": {"name": "pp"}, "spec": {"resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment"}]}}))).await;
    let smp = send(
        &cp,
        with_body(
            "PATCH",
            "/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies/pp",
            "application/strategic-merge-patch+json",
            "{}",
        ),
    )
    .await;
    assert_eq!(smp.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let cp = control_plane().await;
    let body = json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}});
    send(
        &cp,
        json("POST", "/api/v1/namespaces/default/configmaps", &body),
    )
    .await;
    let url = "/api/v1/namespaces/default/configmaps/held";
    let deleting = send(&cp, with_body("DELETE", url, "application/json", "")).await;
    assert_eq!(deleting.status, StatusCode::ACCEPTED);
    let still = send(&cp, get(url)).await;
    assert!(still.body["metadata"]["deletionTimestamp"].is_string());
    let released = send(
        &cp,
        with_body(
            "PATCH",
            url,
            "application/merge-patch+json",
            r#"{"metadata":{"finalizers":null}}"#,
        ),
    )
    .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    assert_eq!(send(&cp, get(url)).await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn server_side_apply_creates_then_detects_conflicts() {
    let cp = control_plane().await;
    let url = format!("{DEPLOYMENTS}/applied?fieldManager=alice");
    let body = deployment("applied", 2).to_string();
    let created = send(
        &cp,
        with_body("PATCH", &url, "application/apply-patch+yaml", body),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let managers: Vec<&str> = created.body["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|m| m["manager"].as_str().expect("manager"))
        .collect();
    assert!(managers.contains(&"alice"), "{managers:?}");
    let mut change = deployment("applied", 5);
    change["metadata"]["labels"] = json!({"app": "applied"});
    let conflict = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/applied?fieldManager=bob"),
            "application/apply-patch+yaml",
            change.to_string(),
        ),
    )
    .await;
    assert_eq!(conflict.status, StatusCode::CONFLICT, "{}", conflict.body);
    assert!(
        conflict.body["message"]
            .as_str()
            .expect("msg")
            .contains(".spec.replicas")
    );
    let forced = send(
        &cp,
        with_body(
            "PATCH",
            &format!("{DEPLOYMENTS}/applied?fieldManager=bob&force=true"),
            "application/apply-patch+yaml",
            change.to_string(),
        ),
    )
    .await;
    assert_eq!(forced.status, StatusCode::OK, "{}", forced.body);
    assert_eq!(forced.body["spec"]["replicas"], 5);
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_content() {
    let cp = control_plane().await;
    send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "doomed"}}),
        ),
    )
    .await;
    send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/doomed/configmaps",
            &json!({"metadata": {"name": "a"}}),
        ),
    )
    .await;
    let deleting = send(
        &cp,
        with_body(
            "DELETE",
            "/api/v1/namespaces/doomed",
            "application/json",
            "",
        ),
    )
    .await;
    assert_eq!(deleting.body["status"]["phase"], "Terminating");
    let refused = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/doomed/configmaps",
            &json!({"metadata": {"name": "b"}}),
        ),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    eventually(std::time::Duration::from_secs(10), || async {
        send(&cp, get("/api/v1/namespaces/doomed")).await.status == StatusCode::NOT_FOUND
    })
    .await;
    assert_eq!(
        send(&cp, get("/api/v1/namespaces/doomed/configmaps/a"))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn tables_have_the_columns_kubectl_users_know() {
    let cp = control_plane().await;
    send(&cp, json("POST", DEPLOYMENTS, &deployment("web", 3))).await;
    let mut request = get(DEPLOYMENTS);
    request.headers_mut().insert(
        http::header::ACCEPT,
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
            .parse()
            .expect("header"),
    );
    let table = send(&cp, request).await;
    assert_eq!(table.body["kind"], "Table");
    let names: Vec<&str> = table.body["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let row = &table.body["rows"][0]["cells"];
    assert_eq!(row[0], "web");
    assert_eq!(row[1], "0/3");
    assert_eq!(row[6], "nginx:1.27");
    assert_eq!(
        table.body["rows"][0]["object"]["kind"],
        "PartialObjectMetadata"
    );
}

#[tokio::test]
async fn a_cluster_scoped_resource_has_no_route_under_a_namespace() {
    let cp = control_plane().await;
    let reply = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces/default/namespaces",
            &serde_json::json!({"metadata": {"name": "nested"}}),
        ),
    )
    .await;
    assert_eq!(reply.status, http::StatusCode::NOT_FOUND, "{}", reply.body);
    assert_eq!(
        reply.body["message"],
        "the server could not find the requested resource"
    );
    let listed = send(
        &cp,
        get("/apis/scheduling.k8s.io/v1/namespaces/default/priorityclasses"),
    )
    .await;
    assert_eq!(listed.status, http::StatusCode::NOT_FOUND);
}

/// kube's `NamespaceLifecycle`: `default`, `kube-system` and `kube-public` can never be deleted
/// (they hold what the control plane itself relies on); other namespaces can.
#[tokio::test]
async fn immortal_namespaces_may_not_be_deleted() {
    let cp = control_plane().await;
    for name in ["default", "kube-system", "kube-public"] {
        let refused = send(
            &cp,
            with_body(
                "DELETE",
                &format!("/api/v1/namespaces/{name}"),
                "application/json",
                "",
            ),
        )
        .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
        assert_eq!(refused.body["reason"], "Forbidden");
        assert_eq!(
            refused.body["message"],
            format!("namespaces {name:?} is forbidden: this namespace may not be deleted")
        );
        let kept = send(&cp, get(&format!("/api/v1/namespaces/{name}"))).await;
        assert_eq!(kept.status, StatusCode::OK);
        assert!(kept.body["metadata"].get("deletionTimestamp").is_none());
    }
    let created = send(
        &cp,
        json(
            "POST",
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "kube-mine"}}),
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let deleted = send(
        &cp,
        with_body(
            "DELETE",
            "/api/v1/namespaces/kube-mine",
            "application/json",
            "",
        ),
    )
    .await;
    assert!(deleted.status.is_success(), "{}", deleted.body);
    // Namespaces have no deletecollection (kube's namespace storage has none).
    let collection = send(
        &cp,
        with_body("DELETE", "/api/v1/namespaces", "application/json", ""),
    )
    .await;
    assert_eq!(collection.status, StatusCode::METHOD_NOT_ALLOWED);
    let kept = send(&cp, get("/api/v1/namespaces/default")).await;
    assert_eq!(kept.status, StatusCode::OK);
}
