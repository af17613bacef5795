//! Bundled customizations of the ml group (see `bundled.rs`): file name and text, the files
//! in `bundled/ml/`.

/// The customizations of this group.
pub(super) const FILES: &[(&str, &str)] = &[];

#[cfg(test)]
mod tests;
