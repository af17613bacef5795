//! Translation of store requests into etcd requests and of etcd responses back, without
//! copying values: etcd's protobuf buffers become our `Bytes`.

use bytes::Bytes;
use etcd_client::proto::{PbKeyValue, PbResponseHeader, PbResponseOp, PbTxnOpResponse};
use etcd_client::{DeleteOptions, PutOptions, TxnOp};
use flotilla_store::{
    Compare, CompareOp, CompareTarget, KeyValue, Op, OpResult, Revision, StoreError,
};

use crate::keys::Namespace;

/// A key-value read from etcd, its key taken back out of the namespace.
pub(crate) fn key_value(ns: &Namespace, kv: PbKeyValue) -> Result<KeyValue, StoreError> {
    Ok(KeyValue {
        key: ns.strip(kv.key)?,
        value: Bytes::from(kv.value),
        create_revision: kv.create_revision,
        mod_revision: kv.mod_revision,
        version: kv.version,
    })
}

/// The store revision a response header reports.
pub(crate) fn header_revision(
    step: &str,
    header: Option<PbResponseHeader>,
) -> Result<Revision, StoreError> {
    header
        .map(|h| h.revision)
        .ok_or_else(|| StoreError::Backend {
            message: format!("{step}: etcd response without a header"),
            source: None,
        })
}

pub(crate) fn compare(ns: &Namespace, compare: Compare) -> etcd_client::Compare {
    let op = match compare.op {
        CompareOp::Equal => etcd_client::CompareOp::Equal,
        CompareOp::NotEqual => etcd_client::CompareOp::NotEqual,
        CompareOp::Less => etcd_client::CompareOp::Less,
        CompareOp::Greater => etcd_client::CompareOp::Greater,
    };
    let key = ns.owned_key(compare.key);
    match compare.target {
        CompareTarget::ModRevision(r) => etcd_client::Compare::mod_revision(key, op, r),
        CompareTarget::CreateRevision(r) => etcd_client::Compare::create_revision(key, op, r),
        CompareTarget::Version(v) => etcd_client::Compare::version(key, op, v),
        CompareTarget::Value(v) => etcd_client::Compare::value(key, op, Vec::from(v)),
    }
}

/// What a put needs to rebuild its key-value: etcd's put reply carries only the previous one.
#[derive(Debug)]
pub(crate) enum Pending {
    Put { key: Bytes, value: Bytes },
    Delete,
    Get,
}

/// The etcd operation for `op`, and what to remember to map its result.
pub(crate) fn op(ns: &Namespace, op: Op) -> (TxnOp, Pending) {
    match op {
        Op::Put { key, value } => {
            let etcd = TxnOp::put(
                ns.key(&key),
                Vec::from(value.clone()),
                Some(PutOptions::new().with_prev_key()),
            );
            (etcd, Pending::Put { key, value })
        }
        Op::Delete { key } => {
            let etcd = TxnOp::delete(
                ns.owned_key(key),
                Some(DeleteOptions::new().with_prev_key()),
            );
            (etcd, Pending::Delete)
        }
        Op::Get { key } => (TxnOp::get(ns.owned_key(key), None), Pending::Get),
    }
}

/// The result of one operation of a transaction committed at `revision`.
pub(crate) fn op_result(
    ns: &Namespace,
    pending: Pending,
    response: PbResponseOp,
    revision: Revision,
) -> Result<OpResult, StoreError> {
    let mismatch = |response: &Option<PbTxnOpResponse>| StoreError::Backend {
        message: format!("etcd answered a transaction operation with {response:?}"),
        source: None,
    };
    match (pending, response.response) {
        (Pending::Put { key, value }, Some(PbTxnOpResponse::ResponsePut(put))) => {
            put_result(ns, key, value, put.prev_kv, revision)
        }
        (Pending::Delete, Some(PbTxnOpResponse::ResponseDeleteRange(delete))) => {
            let prev = delete.prev_kvs.into_iter().next();
            Ok(OpResult::Delete {
                prev: prev.map(|kv| key_value(ns, kv)).transpose()?,
            })
        }
        (Pending::Get, Some(PbTxnOpResponse::ResponseRange(range))) => {
            let kv = range.kvs.into_iter().next();
            Ok(OpResult::Get(kv.map(|kv| key_value(ns, kv)).transpose()?))
        }
        (_, other) => Err(mismatch(&other)),
    }
}

/// The result of a put of `value` under `key` at `revision`, replacing `prev`.
pub(crate) fn put_result(
    ns: &Namespace,
    key: Bytes,
    value: Bytes,
    prev: Option<PbKeyValue>,
    revision: Revision,
) -> Result<OpResult, StoreError> {
    let prev = prev.map(|kv| key_value(ns, kv)).transpose()?;
    // A transaction writes a key at most once, so the put wrote at the transaction's revision
    // on top of `prev`.
    let kv = KeyValue {
        key,
        value,
        create_revision: prev.as_ref().map_or(revision, |p| p.create_revision),
        mod_revision: revision,
        version: prev.as_ref().map_or(1, |p| p.version + 1),
    };
    Ok(OpResult::Put { kv, prev })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pb(key: &[u8], value: &[u8], create: i64, modified: i64, version: i64) -> PbKeyValue {
        PbKeyValue {
            key: key.to_vec(),
            create_revision: create,
            mod_revision: modified,
            version,
            value: value.to_vec(),
            lease: 0,
        }
    }

    #[test]
    fn a_put_result_is_rebuilt_from_the_previous_value_and_the_revision() {
        let ns = Namespace::new(Bytes::from_static(b"/p"));
        let pending = Pending::Put {
            key: Bytes::from("/a"),
            value: Bytes::from("new"),
        };
        let response = PbResponseOp {
            response: Some(PbTxnOpResponse::ResponsePut(
                etcd_client::proto::PbPutResponse {
                    header: None,
                    prev_kv: Some(pb(b"/p/a", b"old", 3, 5, 2)),
                },
            )),
        };
        let result = op_result(&ns, pending, response, 9).expect("put result");
        let OpResult::Put { kv, prev } = result else {
            panic!("{result:?}");
        };
        assert_eq!((kv.create_revision, kv.mod_revision, kv.version), (3, 9, 3));
        assert_eq!(kv.key, Bytes::from("/a"));
        assert_eq!(prev.expect("prev").key, Bytes::from("/a"));
    }

    #[test]
    fn a_creating_put_starts_at_version_one() {
        let ns = Namespace::new(Bytes::new());
        let pending = Pending::Put {
            key: Bytes::from("/a"),
            value: Bytes::from("v"),
        };
        let response = PbResponseOp {
            response: Some(PbTxnOpResponse::ResponsePut(Default::default())),
        };
        let result = op_result(&ns, pending, response, 4).expect("put result");
        assert!(matches!(result, OpResult::Put { kv, prev: None }
            if kv.create_revision == 4 && kv.mod_revision == 4 && kv.version == 1));
    }

    #[test]
    fn a_mismatched_answer_is_a_backend_error() {
        let ns = Namespace::new(Bytes::new());
        let response = PbResponseOp { response: None };
        assert!(matches!(
            op_result(&ns, Pending::Get, response, 1),
            Err(StoreError::Backend { .. })
        ));
    }
}
