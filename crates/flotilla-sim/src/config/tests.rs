use super::*;

const EXAMPLE: &str = r#"
seed: 42
startLatency: 500ms
clusters:
  - name: gpu-east
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    provider: aws
    labels: {tier: gpu}
    nodePools:
      - name: a100
        count: 4
        profile: gpu-a100
        labels: {pool: a100}
        taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
      - name: system
        count: 2
        profile: cpu
        capacity: {cpu: 16, memory: 64Gi}
"#;

#[test]
fn the_documented_example_parses() {
    let spec = SimConfig::from_yaml(EXAMPLE)
        .and_then(|c| c.validate())
        .expect("valid");
    assert_eq!(spec.settings.seed, 42);
    assert_eq!(spec.settings.start_latency, Duration::from_millis(500));
    let c = &spec.clusters[0];
    assert_eq!(c.node_count(), 6);
    assert_eq!(c.pools[0].taints[0].effect, "NoSchedule");
    assert_eq!(c.pools[1].profile.capacity["cpu"], "16");
}

fn error_of(yaml: &str) -> ConfigError {
    SimConfig::from_yaml(yaml)
        .and_then(|c| c.validate())
        .expect_err("invalid")
}

#[test]
fn bad_input_names_the_field() {
    let dup = error_of("clusters: [{name: a}, {name: a}]");
    assert_eq!(dup.field, "clusters[1].name");
    let profile = error_of("clusters: [{name: a, nodePools: [{name: p, count: 1, profile: tpu}]}]");
    assert_eq!(profile.field, "clusters[0].nodePools[0].profile");
    assert!(profile.message.contains("unknown profile \"tpu\""));
    let negative =
        error_of("clusters: [{name: a, nodePools: [{name: p, count: -3, profile: cpu}]}]");
    assert_eq!(
        negative.to_string(),
        "clusters[0].nodePools[0].count: must not be negative (got -3)"
    );
    let quantity = error_of(
        "clusters: [{name: a, nodePools: [{name: p, count: 1, profile: cpu, capacity: {memory: lots}}]}]",
    );
    assert_eq!(quantity.field, "clusters[0].nodePools[0].capacity[memory]");
    let capacity = error_of(
        "clusters: [{name: a, nodePools: [{name: p, count: 1, profile: cpu, capacity: {cpu: -2}}]}]",
    );
    assert!(capacity.message.contains("negative"));
    let unknown = error_of("clusters: [{name: a, nodepools: []}]");
    assert!(unknown.message.contains("nodepools"), "{unknown}");
    let effect = error_of(
        "clusters: [{name: a, nodePools: [{name: p, count: 1, profile: cpu, taints: [{key: k, effect: Never}]}]}]",
    );
    assert_eq!(effect.field, "clusters[0].nodePools[0].taints[0].effect");
    assert_eq!(
        error_of("clusters: [{name: Bad_Name}]").field,
        "clusters[0].name"
    );
    assert_eq!(
        error_of("startLatency: soon\nclusters: [{name: a}]").field,
        "startLatency"
    );
}

#[test]
fn quick_flags_and_defaults() {
    let spec = SimConfig::quick(&["m1".into(), "m2".into()], 3, "gpu-h100")
        .validate()
        .expect("valid");
    assert_eq!(spec.clusters.len(), 2);
    assert_eq!(
        spec.clusters[1].zones,
        ["region-1a", "region-1b", "region-1c"]
    );
    assert_eq!(spec.settings.start_latency, Duration::from_secs(1));
    assert!(
        spec.settings.compact_storage,
        "objects are stored compact by default"
    );
}

#[test]
fn compact_storage_can_be_turned_off() {
    let spec = SimConfig::from_yaml("compactStorage: false\nclusters: [{name: a}]")
        .and_then(|c| c.validate())
        .expect("valid");
    assert!(!spec.settings.compact_storage);
    let typo = SimConfig::from_yaml("compactStorage: sometimes\nclusters: [{name: a}]");
    assert!(typo.is_err(), "not a boolean");
}

#[test]
fn durations() {
    assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
    assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    assert!(parse_duration("5").is_err());
    assert!(parse_duration("-1s").is_err());
}

#[test]
fn unpullable_images_default_to_karmadas_convention_and_lists_replace_it() {
    let default = SimConfig::quick(&["a".into()], 1, "cpu")
        .validate()
        .expect("valid");
    assert_eq!(
        default.settings.unpullable_images,
        crate::image::UnpullableImages {
            repositories: vec!["fake".into()],
            registries: vec![".invalid".into()],
        }
    );
    let spec = SimConfig::from_yaml(
        "unpullableImages: {repositories: [broken, fake]}\nclusters: [{name: a}]",
    )
    .and_then(|c| c.validate())
    .expect("valid");
    let rules = &spec.settings.unpullable_images;
    assert_eq!(rules.repositories, ["broken", "fake"]);
    assert_eq!(
        rules.registries,
        [".invalid"],
        "a list left out keeps its default"
    );
    let off = SimConfig::from_yaml(
        "unpullableImages: {repositories: [], registries: []}\nclusters: [{name: a}]",
    )
    .and_then(|c| c.validate())
    .expect("valid");
    assert!(off.settings.unpullable_images.is_empty());
    let bad = error_of("unpullableImages: {registries: [\"a/b\"]}\nclusters: [{name: a}]");
    assert_eq!(bad.field, "unpullableImages.registries[0]");
    let unknown = error_of("unpullableImages: {images: [x]}\nclusters: [{name: a}]");
    assert!(unknown.message.contains("unknown field"), "{unknown}");
}
