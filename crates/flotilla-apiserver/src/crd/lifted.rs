//! Structural-schema behaviour of kube-apiserver's apiextensions server, written anew:
//! validation with kube-openapi's messages, pruning of unknown fields, and defaulting.

pub mod defaulting;
pub mod pruning;
pub mod validation;

#[cfg(test)]
mod tests;
