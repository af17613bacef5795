//! Bundled customizations of the gitops group (see `bundled.rs`): file name and text, the files
//! in `bundled/gitops/`.

/// The customizations of this group.
pub(super) const FILES: &[(&str, &str)] = &[];

#[cfg(test)]
mod tests;
