use futures::StreamExt as _;
use serde_json::json;

use super::*;

fn pods() -> Gvr {
    Gvr {
        group: String::new(),
        version: "v1".into(),
        resource: "pods".into(),
    }
}

fn resource(namespaces: Namespaces) -> CachedResource {
    CachedResource {
        api: ApiResource {
            group: String::new(),
            version: "v1".into(),
            api_version: "v1".into(),
            kind: "Pod".into(),
            plural: "pods".into(),
        },
        namespaced: true,
        namespaces,
    }
}

fn pod(ns: &str, name: &str, rv: u64) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "namespace": ns, "name": name, "resourceVersion": rv.to_string(), "labels": {"app": name},
    }})
}

fn names(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|i| {
            format!(
                "{}:{}",
                i["metadata"]["annotations"][CACHE_SOURCE_ANNOTATION]
                    .as_str()
                    .unwrap(),
                i["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn two_members() -> Arc<SearchCache> {
    let cache = SearchCache::new();
    cache.insert_static(
        "member2",
        &pods(),
        resource(Namespaces::all()),
        vec![pod("a", "p3", 30), pod("b", "p4", 31)],
        40,
    );
    cache.insert_static(
        "member1",
        &pods(),
        resource(Namespaces::all()),
        vec![pod("a", "p1", 10), pod("a", "p2", 11)],
        20,
    );
    cache
}

fn member(cache: &SearchCache, name: &str) -> Arc<ResourceCache> {
    cache
        .caches_of(&pods())
        .into_iter()
        .find(|c| c.cluster == name)
        .unwrap()
}

#[test]
fn lists_merge_members_in_name_order_and_page_across_them() {
    let cache = two_members();
    let all = cache.list(&pods(), None, &ListOptions::default()).unwrap();
    assert_eq!(
        names(&all.items),
        ["member1:p1", "member1:p2", "member2:p3", "member2:p4"]
    );
    assert_eq!(all.continue_token, "");
    let version = MultiVersion::parse(&all.resource_version);
    assert_eq!(
        (version.get("member1"), version.get("member2")),
        ("20", "40")
    );

    // Pages of one, two and the rest: the token names where to resume.
    let page = |token: Option<String>, limit| {
        cache
            .list(
                &pods(),
                None,
                &ListOptions {
                    limit: Some(limit),
                    continue_token: token,
                    ..Default::default()
                },
            )
            .unwrap()
    };
    let first = page(None, 1);
    assert_eq!(names(&first.items), ["member1:p1"]);
    assert_eq!(
        MultiContinue::parse(&first.continue_token).cluster,
        "member1"
    );
    // Every member has a version even though the page did not reach member2.
    assert_eq!(
        MultiVersion::parse(&first.resource_version).get("member2"),
        "40"
    );
    let second = page(Some(first.continue_token), 2);
    assert_eq!(names(&second.items), ["member1:p2", "member2:p3"]);
    let third = page(Some(second.continue_token), 5);
    assert_eq!(names(&third.items), ["member2:p4"]);
    assert_eq!(third.continue_token, "");
    // A page ending exactly at a member's last object resumes at the next member.
    let exact = page(None, 2);
    let token = MultiContinue::parse(&exact.continue_token);
    assert_eq!(
        (token.cluster.as_str(), token.continue_.as_str()),
        ("member2", "")
    );
}

#[test]
fn lists_filter_by_namespace_labels_fields_and_registry_namespaces() {
    let cache = two_members();
    let in_a = cache
        .list(&pods(), Some("a"), &ListOptions::default())
        .unwrap();
    assert_eq!(
        names(&in_a.items),
        ["member1:p1", "member1:p2", "member2:p3"]
    );
    let labelled = cache
        .list(
            &pods(),
            None,
            &ListOptions {
                label_selector: Some("app in (p2,p4)".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(names(&labelled.items), ["member1:p2", "member2:p4"]);
    let named = cache
        .list(
            &pods(),
            None,
            &ListOptions {
                field_selector: Some("metadata.name=p3".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(names(&named.items), ["member2:p3"]);
    assert!(matches!(
        cache.list(
            &pods(),
            None,
            &ListOptions {
                label_selector: Some("a in (".into()),
                ..Default::default()
            }
        ),
        Err(SearchError::BadRequest(_))
    ));

    // A registry naming namespace b only: the proxy serves b, search/cache everything.
    let mut only_b = Namespaces::default();
    only_b.add("b");
    let cache = SearchCache::new();
    cache.insert_static(
        "member1",
        &pods(),
        resource(only_b),
        vec![pod("a", "p1", 1), pod("b", "p2", 2)],
        3,
    );
    let listed = cache.list(&pods(), None, &ListOptions::default()).unwrap();
    assert_eq!(names(&listed.items), ["member1:p2"]);
    assert!(matches!(
        cache.get(&pods(), "a", "p1"),
        Err(SearchError::NotFound { .. })
    ));
    assert_eq!(
        names(&cache.search(&pods(), None, None, None).unwrap()),
        ["member1:p1", "member1:p2"]
    );
}

#[test]
fn get_names_its_member_and_refuses_ambiguity() {
    let cache = two_members();
    let p3 = cache.get(&pods(), "a", "p3").unwrap();
    assert_eq!(
        p3["metadata"]["annotations"][CACHE_SOURCE_ANNOTATION],
        "member2"
    );
    let version = MultiVersion::parse(p3["metadata"]["resourceVersion"].as_str().unwrap());
    assert_eq!(version.get("member2"), "30");
    assert_eq!(cache.owner(&pods(), "a", "p3").unwrap(), "member2");
    cache.insert_static(
        "member3",
        &pods(),
        resource(Namespaces::all()),
        vec![pod("a", "p3", 5)],
        6,
    );
    let error = cache.get(&pods(), "a", "p3").unwrap_err();
    assert_eq!(
        error.to_string(),
        "Operation cannot be fulfilled on pods \"p3\": ambiguous objects in clusters [member2, member3]"
    );
    assert!(matches!(
        cache.get(&pods(), "a", "nope"),
        Err(SearchError::NotFound { .. })
    ));
}

#[tokio::test]
async fn watches_resume_each_member_from_the_list_version() {
    let cache = two_members();
    let listed = cache.list(&pods(), None, &ListOptions::default()).unwrap();
    // A change made before the watch starts is replayed from the window.
    member(&cache, "member1").apply(ChangeType::Modified, pod("a", "p1", 21));
    let mut events = cache
        .watch(
            &pods(),
            None,
            &ListOptions {
                resource_version: Some(listed.resource_version.clone()),
                ..Default::default()
            },
        )
        .unwrap();
    let first = events.next().await.unwrap();
    assert_eq!(first.type_, "MODIFIED");
    assert_eq!(
        first.object["metadata"]["annotations"][CACHE_SOURCE_ANNOTATION],
        "member1"
    );
    let version = MultiVersion::parse(
        first.object["metadata"]["resourceVersion"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(
        (version.get("member1"), version.get("member2")),
        ("21", "40")
    );
    // A live change of the other member.
    member(&cache, "member2").apply(ChangeType::Deleted, pod("b", "p4", 41));
    let second = events.next().await.unwrap();
    assert_eq!(second.type_, "DELETED");
    assert_eq!(second.object["metadata"]["name"], "p4");
    let version = MultiVersion::parse(
        second.object["metadata"]["resourceVersion"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(
        (version.get("member1"), version.get("member2")),
        ("21", "41")
    );
}

#[tokio::test]
async fn a_watch_without_a_version_starts_with_every_object_and_old_versions_expire() {
    let cache = two_members();
    let events = cache
        .watch(&pods(), Some("a"), &ListOptions::default())
        .unwrap();
    let initial: Vec<Event> = events.take(3).collect().await;
    assert!(initial.iter().all(|e| e.type_ == "ADDED"));
    let mut seen: Vec<String> = initial
        .iter()
        .map(|e| e.object["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    seen.sort();
    assert_eq!(seen, ["p1", "p2", "p3"]);

    let mut old = MultiVersion::default();
    old.set("member1", "5".into());
    let error = cache
        .watch(
            &pods(),
            None,
            &ListOptions {
                resource_version: Some(old.encode()),
                ..Default::default()
            },
        )
        .err()
        .unwrap();
    assert!(matches!(error, SearchError::Expired { .. }), "{error}");
}

#[tokio::test]
async fn a_new_cluster_ends_open_watches_so_clients_list_again() {
    let cache = two_members();
    let mut events = cache.watch(&pods(), None, &ListOptions::default()).unwrap();
    for _ in 0..4 {
        events.next().await.unwrap();
    }
    let members: Arc<dyn MemberClients> = Arc::new(flotilla_member::StaticMemberClients::default());
    let mut desired = Desired::default();
    for cluster in ["member1", "member2", "member3"] {
        desired
            .clusters
            .entry(cluster.into())
            .or_default()
            .insert(pods(), resource(Namespaces::all()));
    }
    desired.registered.insert(pods());
    cache.update(&desired, &members);
    assert!(events.next().await.is_none());
}
