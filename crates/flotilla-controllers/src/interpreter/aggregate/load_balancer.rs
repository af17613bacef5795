//! Service (LoadBalancer) and Ingress status: the members' `loadBalancer.ingress` entries as
//! one list. Entries naming the same hostname and IP (and, for Services, the same `ipMode`)
//! become one, with the union of their ports sorted by port, protocol, then error (none
//! first). Entries are sorted by hostname (entries without one last), IP, then `ipMode`
//! (entries without one last). Only the fields of the Kubernetes types are kept.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::{Item, statuses};

/// A Service's new status.
pub(super) fn service(items: &[Item<'_>]) -> Value {
    merged(items, true)
}

/// An Ingress's new status (its entries have no `ipMode`).
pub(super) fn ingress(items: &[Item<'_>]) -> Value {
    merged(items, false)
}

/// Identity of an entry, ordered as the entries are listed.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct EntryKey {
    no_hostname: bool,
    hostname: String,
    ip: String,
    no_ip_mode: bool,
    ip_mode: String,
}

/// A port status, ordered as the ports are listed (`None` before any error).
type PortKey = (i64, String, Option<String>);

fn text(value: &Value, field: &str) -> Option<String> {
    value.get(field).and_then(Value::as_str).map(str::to_owned)
}

fn merged(items: &[Item<'_>], with_ip_mode: bool) -> Value {
    let mut entries: BTreeMap<EntryKey, BTreeSet<PortKey>> = BTreeMap::new();
    for entry in statuses(items).flat_map(|s| {
        s.pointer("/loadBalancer/ingress")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|e| e.is_object())
    }) {
        let hostname = text(entry, "hostname").unwrap_or_default();
        let ip_mode = if with_ip_mode {
            text(entry, "ipMode")
        } else {
            None
        };
        let key = EntryKey {
            no_hostname: hostname.is_empty(),
            hostname,
            ip: text(entry, "ip").unwrap_or_default(),
            no_ip_mode: ip_mode.is_none(),
            ip_mode: ip_mode.unwrap_or_default(),
        };
        let ports = entries.entry(key).or_default();
        for port in entry
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            ports.insert((
                port.get("port").and_then(Value::as_i64).unwrap_or(0),
                text(port, "protocol").unwrap_or_default(),
                text(port, "error"),
            ));
        }
    }
    let list: Vec<Value> = entries
        .into_iter()
        .map(|(key, ports)| {
            let mut entry = Map::new();
            if !key.ip.is_empty() {
                entry.insert("ip".into(), json!(key.ip));
            }
            if !key.hostname.is_empty() {
                entry.insert("hostname".into(), json!(key.hostname));
            }
            if !key.no_ip_mode {
                entry.insert("ipMode".into(), json!(key.ip_mode));
            }
            if !ports.is_empty() {
                let ports: Vec<Value> = ports
                    .into_iter()
                    .map(|(port, protocol, error)| {
                        let mut status = Map::new();
                        status.insert("port".into(), json!(port));
                        status.insert("protocol".into(), json!(protocol));
                        if let Some(error) = error {
                            status.insert("error".into(), json!(error));
                        }
                        Value::Object(status)
                    })
                    .collect();
                entry.insert("ports".into(), Value::Array(ports));
            }
            Value::Object(entry)
        })
        .collect();
    let load_balancer = if list.is_empty() {
        json!({})
    } else {
        json!({"ingress": list})
    };
    json!({"loadBalancer": load_balancer})
}
