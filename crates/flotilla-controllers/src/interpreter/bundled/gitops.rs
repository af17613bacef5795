//! Bundled customizations of the gitops group (see `bundled.rs`): file name and text, the files
//! in `bundled/gitops/`.

/// The customizations of this group.
pub(super) const FILES: &[(&str, &str)] = &[
    ("flux-bucket.yaml", include_str!("gitops/flux-bucket.yaml")),
    (
        "flux-helmchart.yaml",
        include_str!("gitops/flux-helmchart.yaml"),
    ),
    (
        "flux-helmrelease.yaml",
        include_str!("gitops/flux-helmrelease.yaml"),
    ),
    (
        "flux-helmrepository.yaml",
        include_str!("gitops/flux-helmrepository.yaml"),
    ),
    (
        "flux-ocirepository.yaml",
        include_str!("gitops/flux-ocirepository.yaml"),
    ),
    (
        "kyverno-clusterpolicy.yaml",
        include_str!("gitops/kyverno-clusterpolicy.yaml"),
    ),
    (
        "kyverno-policy.yaml",
        include_str!("gitops/kyverno-policy.yaml"),
    ),
];

#[cfg(test)]
mod tests;
