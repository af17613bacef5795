//! Bundled customizations of the ml group (see `bundled.rs`): file name and text, the files
//! in `bundled/ml/`.

/// The customizations of this group.
pub(super) const FILES: &[(&str, &str)] = &[
    (
        "flink-flinkdeployment.yaml",
        include_str!("ml/flink-flinkdeployment.yaml"),
    ),
    (
        "ray-rayservice.yaml",
        include_str!("ml/ray-rayservice.yaml"),
    ),
    (
        "spark-sparkapplication.yaml",
        include_str!("ml/spark-sparkapplication.yaml"),
    ),
];

#[cfg(test)]
mod tests;
