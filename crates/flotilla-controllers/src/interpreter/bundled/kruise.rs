//! Bundled customizations of the kruise group (see `bundled.rs`): file name and text, the files
//! in `bundled/kruise/`.

/// The customizations of this group.
pub(super) const FILES: &[(&str, &str)] = &[];

#[cfg(test)]
mod tests;
