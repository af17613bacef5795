//! `discovery.k8s.io/v1` EndpointSlice: kube-apiserver's defaulting and validation.
//!
//! Ported (behaviour, not code) from kubernetes/kubernetes v1.32:
//! `pkg/apis/discovery/v1/defaults.go` (`SetDefaults_EndpointPort`: a port's `name` defaults to
//! `""` and its `protocol` to `TCP`), `pkg/apis/discovery/validation/validation.go`
//! (`ValidateEndpointSlice`, `ValidateEndpointSliceUpdate`: the address type, the endpoints'
//! addresses, node names and hostnames, the ports' names and protocols, the limits; topology
//! hints and `deprecatedTopology` are not checked), and `ValidateEndpointIP` of
//! `pkg/apis/core/validation/validation.go`, which v1 Endpoints' addresses are also checked
//! with (`validateEndpointAddress`: [`endpoints_errors`]).

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use flotilla_api::validation::{
    FieldError, FieldPath, is_dns1123_label, is_dns1123_subdomain, is_qualified_name,
};
use serde_json::{Map, Value};

const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const MAX_ADDRESSES: usize = 100;
const MAX_PORTS: usize = 20_000;
const MAX_ENDPOINTS: usize = 1_000;

/// Every port gets a `name` (`""`) and a `protocol` (`TCP`) when it has none.
pub fn default(object: &mut Map<String, Value>) {
    let Some(Value::Array(ports)) = object.get_mut("ports") else {
        return;
    };
    for port in ports.iter_mut().filter_map(Value::as_object_mut) {
        if port.get("name").is_none_or(Value::is_null) {
            port.insert("name".into(), "".into());
        }
        if port.get("protocol").is_none_or(Value::is_null) {
            port.insert("protocol".into(), "TCP".into());
        }
    }
}

/// The errors of an EndpointSlice (and of its update from `old`). Metadata is checked by the
/// caller; fields of the wrong type are field validation's.
pub fn errors(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let address_type = object["addressType"].as_str().unwrap_or("");
    if address_type.is_empty() {
        errors.push(FieldError::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errors.push(FieldError::not_supported(
            "addressType",
            address_type,
            &ADDRESS_TYPES,
        ));
    }
    endpoint_errors(object, address_type, &mut errors);
    port_errors(object, &mut errors);
    if let Some(old) = old {
        let before = old["addressType"].as_str().unwrap_or("");
        if address_type != before {
            errors.push(FieldError::invalid(
                "addressType",
                address_type,
                "field is immutable",
            ));
        }
    }
    errors
}

/// v1 Endpoints: each `subsets[i].addresses[j].ip` and `notReadyAddresses[j].ip` must be an IP
/// that is not unspecified, loopback or link-local (kube's `validateEndpointAddress`).
pub fn endpoints_errors(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let subsets = FieldPath::new("subsets");
    for (i, subset) in list(&object["subsets"]).iter().enumerate() {
        for field in ["addresses", "notReadyAddresses"] {
            let path = subsets.index(i).child(field);
            for (j, address) in list(&subset[field]).iter().enumerate() {
                let at = path.index(j).child("ip");
                match address["ip"].as_str() {
                    Some(ip) => endpoint_ip_errors(ip, &at, &mut errors),
                    None => errors.push(FieldError::required(&at, "")),
                }
            }
        }
    }
    errors
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

fn endpoint_errors(object: &Value, address_type: &str, errors: &mut Vec<FieldError>) {
    let endpoints = list(&object["endpoints"]);
    let path = FieldPath::new("endpoints");
    if endpoints.len() > MAX_ENDPOINTS {
        errors.push(FieldError::too_many(
            path,
            Some(endpoints.len()),
            Some(MAX_ENDPOINTS),
        ));
        return;
    }
    for (i, endpoint) in endpoints.iter().enumerate() {
        let item = path.index(i);
        let addresses_path = item.child("addresses");
        let addresses = list(&endpoint["addresses"]);
        if addresses.is_empty() {
            errors.push(FieldError::required(
                &addresses_path,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            errors.push(FieldError::too_many(
                &addresses_path,
                Some(addresses.len()),
                Some(MAX_ADDRESSES),
            ));
        }
        for (j, address) in addresses.iter().enumerate() {
            let address = address.as_str().unwrap_or("");
            let at = addresses_path.index(j);
            match address_type {
                "IPv4" => {
                    if address.parse::<Ipv4Addr>().is_err() {
                        errors.push(FieldError::invalid(
                            &at,
                            address,
                            "must be a valid IPv4 address",
                        ));
                    }
                    endpoint_ip_errors(address, &at, errors);
                }
                "IPv6" => {
                    if address.parse::<Ipv6Addr>().is_err() {
                        errors.push(FieldError::invalid(
                            &at,
                            address,
                            "must be a valid IPv6 address",
                        ));
                    }
                    endpoint_ip_errors(address, &at, errors);
                }
                "FQDN" => {
                    for message in is_dns1123_subdomain(address) {
                        errors.push(FieldError::invalid(&at, address, message));
                    }
                }
                _ => {}
            }
        }
        if let Some(node) = endpoint["nodeName"].as_str() {
            for message in is_dns1123_subdomain(node) {
                errors.push(FieldError::invalid(item.child("nodeName"), node, message));
            }
        }
        if let Some(hostname) = endpoint["hostname"].as_str() {
            for message in is_dns1123_label(hostname) {
                errors.push(FieldError::invalid(
                    item.child("hostname"),
                    hostname,
                    message,
                ));
            }
        }
    }
}

/// `ValidateEndpointIP`: addresses nobody can be sent traffic at.
fn endpoint_ip_errors(address: &str, at: &FieldPath, errors: &mut Vec<FieldError>) {
    let Ok(ip) = address.parse::<IpAddr>() else {
        errors.push(FieldError::invalid(
            at,
            address,
            "must be a valid IP address",
        ));
        return;
    };
    let (link_local, link_local_multicast) = match ip {
        IpAddr::V4(v4) => (v4.is_link_local(), v4.octets()[..3] == [224, 0, 0]),
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            (first & 0xffc0 == 0xfe80, first & 0xff0f == 0xff02)
        }
    };
    if ip.is_unspecified() {
        errors.push(FieldError::invalid(
            at,
            address,
            format!("may not be unspecified ({address})"),
        ));
    }
    if ip.is_loopback() {
        errors.push(FieldError::invalid(
            at,
            address,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    if link_local {
        errors.push(FieldError::invalid(
            at,
            address,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errors.push(FieldError::invalid(
            at,
            address,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
}

fn port_errors(object: &Value, errors: &mut Vec<FieldError>) {
    let ports = list(&object["ports"]);
    let path = FieldPath::new("ports");
    if ports.len() > MAX_PORTS {
        errors.push(FieldError::too_many(
            path,
            Some(ports.len()),
            Some(MAX_PORTS),
        ));
        return;
    }
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let item = path.index(i);
        let name = port["name"].as_str().unwrap_or("");
        if !name.is_empty() {
            for message in is_dns1123_label(name) {
                errors.push(FieldError::invalid(item.child("name"), name, message));
            }
        }
        if !names.insert(name) {
            errors.push(FieldError::duplicate(item.child("name"), name));
        }
        match port["protocol"].as_str() {
            None => errors.push(FieldError::required(item.child("protocol"), "")),
            Some(protocol) if !PROTOCOLS.contains(&protocol) => errors.push(
                FieldError::not_supported(item.child("protocol"), protocol, &PROTOCOLS),
            ),
            Some(_) => {}
        }
        if let Some(app_protocol) = port["appProtocol"].as_str() {
            for message in is_qualified_name(app_protocol) {
                errors.push(FieldError::invalid(
                    item.child("appProtocol"),
                    app_protocol,
                    message,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(|e| e.to_string()).collect()
    }

    fn slice(address_type: &str, addresses: &[&str]) -> Value {
        let mut object = json!({
            "metadata": {"name": "web-abcde"},
            "addressType": address_type,
            "endpoints": [{"addresses": addresses, "conditions": {"ready": true}, "nodeName": "n1"}],
            "ports": [{"port": 80}],
        });
        default(object.as_object_mut().expect("object"));
        object
    }

    #[test]
    fn ports_get_an_empty_name_and_tcp() {
        let object = slice("IPv4", &["10.0.0.1"]);
        assert_eq!(
            object["ports"],
            json!([{"name": "", "port": 80, "protocol": "TCP"}])
        );
        assert!(errors(&object, None).is_empty());
    }

    #[test]
    fn the_address_type_is_required_supported_and_immutable() {
        let mut object = slice("IPv4", &["10.0.0.1"]);
        object["addressType"] = Value::Null;
        assert_eq!(
            messages(&errors(&object, None)),
            ["addressType: Required value"]
        );
        object["addressType"] = "IPX".into();
        assert_eq!(
            messages(&errors(&object, None)),
            [
                "addressType: Unsupported value: \"IPX\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""
            ]
        );
        let old = slice("IPv4", &["10.0.0.1"]);
        let new = slice("IPv6", &["fd00::1"]);
        assert_eq!(
            messages(&errors(&new, Some(&old))),
            ["addressType: Invalid value: \"IPv6\": field is immutable"]
        );
    }

    #[test]
    fn addresses_must_be_of_the_type_and_routable() {
        assert_eq!(
            messages(&errors(&slice("IPv4", &["fd00::1", "127.0.0.1"]), None)),
            [
                "endpoints[0].addresses[0]: Invalid value: \"fd00::1\": must be a valid IPv4 address",
                "endpoints[0].addresses[1]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"
            ]
        );
        assert_eq!(
            messages(&errors(&slice("IPv4", &[]), None)),
            ["endpoints[0].addresses: Required value: must contain at least 1 address"]
        );
        assert!(errors(&slice("FQDN", &["db.example.com"]), None).is_empty());
    }

    #[test]
    fn endpoints_addresses_are_routable_ips() {
        let endpoints = json!({"subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "127.0.0.1"}], "notReadyAddresses": [{"ip": "db"}]},
            {"addresses": [{"ip": "169.254.1.1"}, {}]},
        ]});
        assert_eq!(
            messages(&endpoints_errors(&endpoints)),
            [
                "subsets[0].addresses[1].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "subsets[0].notReadyAddresses[0].ip: Invalid value: \"db\": must be a valid IP address",
                "subsets[1].addresses[0].ip: Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "subsets[1].addresses[1].ip: Required value",
            ]
        );
        assert!(
            endpoints_errors(&json!({"subsets": [{"addresses": [{"ip": "fd00::1"}]}]})).is_empty()
        );
    }

    #[test]
    fn port_names_are_labels_unique_and_protocols_known() {
        let mut object = slice("IPv4", &["10.0.0.1"]);
        object["ports"] = json!([
            {"name": "http", "port": 80, "protocol": "TCP"},
            {"name": "http", "port": 81, "protocol": "HTTP"},
        ]);
        assert_eq!(
            messages(&errors(&object, None)),
            [
                "ports[1].name: Duplicate value: \"http\"",
                "ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
            ]
        );
    }
}
