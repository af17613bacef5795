//! Server-side apply's field ownership model, as sigs.k8s.io/structured-merge-diff (v4.4, the
//! version kube-apiserver 1.32 vendors) defines it: field sets of path elements (`f:` fields,
//! `k:` list-map keys, `v:` set values), typed merge, compare and removal over a schema that
//! says which lists are maps, sets or atomic, and the apply/update algorithms of its `merge`
//! package. Written anew from reading `fieldpath/`, `typed/` and `merge/update.go`; no code is
//! copied.

pub mod fieldpath;
pub mod schema;
pub mod typed;
pub mod update;

#[cfg(test)]
mod tests;
