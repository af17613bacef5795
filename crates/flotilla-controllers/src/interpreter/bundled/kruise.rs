//! Bundled customizations of the kruise group (see `bundled.rs`): file name and text, the files
//! in `bundled/kruise/`.

/// The customizations of this group.
pub(super) const FILES: &[(&str, &str)] = &[
    (
        "advancedcronjob.yaml",
        include_str!("kruise/advancedcronjob.yaml"),
    ),
    (
        "broadcastjob.yaml",
        include_str!("kruise/broadcastjob.yaml"),
    ),
    ("cloneset.yaml", include_str!("kruise/cloneset.yaml")),
    ("daemonset.yaml", include_str!("kruise/daemonset.yaml")),
    ("sidecarset.yaml", include_str!("kruise/sidecarset.yaml")),
    (
        "statefulset-v1beta1.yaml",
        include_str!("kruise/statefulset-v1beta1.yaml"),
    ),
    (
        "uniteddeployment.yaml",
        include_str!("kruise/uniteddeployment.yaml"),
    ),
];

#[cfg(test)]
mod tests;
