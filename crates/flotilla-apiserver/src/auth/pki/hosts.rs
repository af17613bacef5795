//! Host names and addresses in serving certificates: parsing the operator's list and reading
//! back what an existing certificate covers, so a restart can tell whether to re-issue it.

use std::net::IpAddr;

use x509_parser::extensions::GeneralName;
use x509_parser::prelude::X509Certificate;

use super::DEFAULT_HOSTS;
use crate::auth::AuthError;

/// A DNS name or IP address a serving certificate must cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Host {
    Ip(IpAddr),
    Dns(String),
}

/// The hosts a serving certificate must cover: the defaults, then `extra`, without duplicates.
pub(super) fn serving_hosts(extra: &[String]) -> Result<Vec<Host>, AuthError> {
    let mut hosts: Vec<Host> = Vec::new();
    for raw in DEFAULT_HOSTS
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str))
    {
        let host = Host::parse(raw)?;
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    Ok(hosts)
}

impl Host {
    pub(super) fn parse(raw: &str) -> Result<Host, AuthError> {
        let bad = |reason: &str| AuthError::BadHost {
            host: raw.to_string(),
            reason: reason.to_string(),
        };
        let trimmed = raw.trim();
        let unbracketed = trimmed
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .unwrap_or(trimmed);
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            return Ok(Host::Ip(ip));
        }
        if trimmed.is_empty() {
            return Err(bad("empty"));
        }
        let valid = trimmed.split('.').enumerate().all(|(i, label)| {
            (i == 0 && label == "*")
                || (!label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        });
        if !valid || trimmed.len() > 253 {
            return Err(bad("not an IP address or DNS name"));
        }
        Ok(Host::Dns(trimmed.to_ascii_lowercase()))
    }
}

/// The DNS and IP subject alternative names of `cert`.
pub(super) fn cert_hosts(cert: &X509Certificate<'_>) -> Vec<Host> {
    let Ok(Some(san)) = cert.subject_alternative_name() else {
        return Vec::new();
    };
    san.value
        .general_names
        .iter()
        .filter_map(|name| match name {
            GeneralName::DNSName(dns) => Some(Host::Dns(dns.to_ascii_lowercase())),
            GeneralName::IPAddress(bytes) => match bytes.len() {
                4 => <[u8; 4]>::try_from(*bytes)
                    .ok()
                    .map(|b| Host::Ip(IpAddr::from(b))),
                16 => <[u8; 16]>::try_from(*bytes)
                    .ok()
                    .map(|b| Host::Ip(IpAddr::from(b))),
                _ => None,
            },
            _ => None,
        })
        .collect()
}
