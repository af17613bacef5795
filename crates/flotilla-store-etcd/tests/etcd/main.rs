//! The etcd backend against real etcd processes: the conformance suite (a fresh etcd per case),
//! behaviour beyond it (prefixes, large values, errors), and a 3-member cluster losing a member
//! under write load.

mod cluster;
mod conformance;
mod extra;
