//! The `imageOverrider` cases of Karmada's `overridemanager` unit tests, restated against
//! Flotilla: the same workloads and overriders, and the images Karmada writes.

use serde_json::{Value, json};

use super::*;

const IMAGE: &str = "fictional.registry.example/imagename:v1.0.0";

/// A workload of `kind` whose containers run `images` (all named `nginx`, as in Karmada's
/// fixtures).
fn workload(kind: &str, images: &[&str]) -> Value {
    let containers: Vec<Value> = images
        .iter()
        .map(|image| json!({"name": "nginx", "image": image}))
        .collect();
    let api_version = match kind {
        "Pod" => "v1",
        "Job" => "batch/v1",
        _ => "apps/v1",
    };
    let mut object = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": "nginx", "labels": {"app": "nginx"}}});
    if kind == "Pod" {
        object["spec"] = json!({"containers": containers});
    } else {
        object["spec"] = json!({"replicas": 1,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": containers}}});
    }
    object
}

/// The image of each container, read at the path Karmada patches.
fn images(object: &Value) -> Vec<String> {
    let path = if object["kind"] == "Pod" {
        "/spec/containers"
    } else {
        "/spec/template/spec/containers"
    };
    let count = object
        .pointer(path)
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    (0..count)
        .map(|i| {
            object
                .pointer(&format!("{path}/{i}/image"))
                .and_then(Value::as_str)
                .expect("image")
                .to_owned()
        })
        .collect()
}

fn run(kind: &str, before: &[&str], overrider: Value) -> Vec<String> {
    let mut object = workload(kind, before);
    apply_overriders(
        &mut object,
        &overriders(json!({ "imageOverrider": [overrider] })),
    )
    .expect("applies");
    images(&object)
}

#[test]
fn registry_add_appends_to_the_registry_or_becomes_it() {
    let add = |value: &str| json!({"component": "Registry", "operator": "add", "value": value});
    // `perl` has no registry: the added value becomes the whole registry.
    assert_eq!(
        run("Job", &["perl:5.34.0"], add("registry.k8s.io")),
        ["registry.k8s.io/perl:5.34.0"]
    );
    let mut at_path = add("registry.k8s.io");
    at_path["predicate"] = json!({"path": "/spec/template/spec/containers/0/image"});
    assert_eq!(
        run("Job", &["perl:5.34.0"], at_path),
        ["registry.k8s.io/perl:5.34.0"]
    );
    assert_eq!(
        run("Deployment", &[IMAGE], add(".test")),
        ["fictional.registry.example.test/imagename:v1.0.0"]
    );
}

#[test]
fn registry_replace_and_remove() {
    assert_eq!(
        run(
            "Deployment",
            &[IMAGE],
            json!({"component": "Registry", "operator": "replace", "value": "fictional.registry.us"})
        ),
        ["fictional.registry.us/imagename:v1.0.0"]
    );
    // The value of a `remove` is ignored.
    assert_eq!(
        run(
            "Deployment",
            &[IMAGE],
            json!({"component": "Registry", "operator": "remove", "value": "fictional.registry.us"})
        ),
        ["imagename:v1.0.0"]
    );
}

#[test]
fn repository_add_replace_and_remove() {
    let cases = [
        (
            "add",
            "/nginx",
            "fictional.registry.example/imagename/nginx:v1.0.0",
        ),
        (
            "replace",
            "nginx",
            "fictional.registry.example/nginx:v1.0.0",
        ),
        // Removing the repository keeps the registry's slash: the result is not a valid
        // reference, but it is what Karmada writes.
        ("remove", "nginx", "fictional.registry.example/:v1.0.0"),
    ];
    for (operator, value, expected) in cases {
        assert_eq!(
            run(
                "Deployment",
                &[IMAGE],
                json!({"component": "Repository", "operator": operator, "value": value})
            ),
            [expected],
            "{operator}"
        );
    }
}

#[test]
fn tag_add_replace_and_remove_with_a_digest_value() {
    let cases = [
        // `v1.0.0sha256:…` is neither a tag nor a digest: unchanged.
        ("add", IMAGE.to_owned()),
        (
            "replace",
            format!("fictional.registry.example/imagename@{DIGEST}"),
        ),
        ("remove", "fictional.registry.example/imagename".to_owned()),
    ];
    for (operator, expected) in cases {
        assert_eq!(
            run(
                "Deployment",
                &[IMAGE],
                json!({"component": "Tag", "operator": operator, "value": DIGEST})
            ),
            [expected],
            "{operator}"
        );
    }
}

#[test]
fn every_workload_kind_with_a_pod_template_has_its_images_overridden() {
    let replace = json!({"component": "Repository", "operator": "replace", "value": "nginx"});
    for kind in [
        "Pod",
        "StatefulSet",
        "ReplicaSet",
        "DaemonSet",
        "Deployment",
        "Job",
    ] {
        assert_eq!(
            run(kind, &[IMAGE], replace.clone()),
            ["fictional.registry.example/nginx:v1.0.0"],
            "{kind}"
        );
    }
}

#[test]
fn without_a_predicate_every_container_is_overridden_and_with_one_only_its_path() {
    let two = [IMAGE, "registry.k8s.io/nginx-slim:0.8"];
    let replace = json!({"component": "Repository", "operator": "replace", "value": "nginx"});
    assert_eq!(
        run("Deployment", &two, replace.clone()),
        [
            "fictional.registry.example/nginx:v1.0.0",
            "registry.k8s.io/nginx:0.8"
        ]
    );

    let mut first = replace.clone();
    first["predicate"] = json!({"path": "/spec/template/spec/containers/0/image"});
    assert_eq!(
        run("Deployment", &[IMAGE], first),
        ["fictional.registry.example/nginx:v1.0.0"]
    );

    let mut second = replace;
    second["predicate"] = json!({"path": "/spec/template/spec/containers/1/image"});
    assert_eq!(
        run("Deployment", &two, second),
        [IMAGE, "registry.k8s.io/nginx:0.8"]
    );
}

#[test]
fn images_split_into_the_parts_karmadas_parser_reports() {
    let digest = "sha256:50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c";
    let with_digest = format!("fictional.registry.example:10443/subpath/imagename@{digest}");
    let cases = [
        ("pause", ["", "pause", "", ""]),
        (
            "subpath/imagename:v1.0.0",
            ["", "subpath/imagename", "v1.0.0", ""],
        ),
        (
            IMAGE,
            ["fictional.registry.example", "imagename", "v1.0.0", ""],
        ),
        (
            "fictional.registry.example:10443/subpath/imagename:v1.0.0",
            [
                "fictional.registry.example:10443",
                "subpath/imagename",
                "v1.0.0",
                "",
            ],
        ),
        (
            with_digest.as_str(),
            [
                "fictional.registry.example:10443",
                "subpath/imagename",
                "",
                digest,
            ],
        ),
        (
            "10.10.10.10:10443/subpath/imagename",
            ["10.10.10.10:10443", "subpath/imagename", "", ""],
        ),
    ];
    for (image, expected) in cases {
        assert_eq!(parts(image), owned(expected), "{image}");
    }

    // Setting, changing and removing each part in turn.
    let mut image = ImageComponents::parse("imagename:v1.0.0").expect("valid");
    image.registry = "fictional.registry.example".into();
    assert_eq!(image.to_string(), IMAGE);
    image.registry.clear();
    assert_eq!(image.to_string(), "imagename:v1.0.0");
    let mut image = ImageComponents::parse("gcr.io/kube-apiserver").expect("valid");
    image.set_tag_or_digest("v1.19.0");
    assert_eq!(image.to_string(), "gcr.io/kube-apiserver:v1.19.0");
    image.remove_tag_or_digest();
    assert_eq!(image.to_string(), "gcr.io/kube-apiserver");
    image.set_tag_or_digest(digest);
    assert_eq!(image.to_string(), format!("gcr.io/kube-apiserver@{digest}"));
    image.remove_tag_or_digest();
    assert_eq!(image.to_string(), "gcr.io/kube-apiserver");
}
