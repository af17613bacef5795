//! What kube-controller-manager's CSR signer issues.
//!
//! Follows Kubernetes v1.32: `pkg/controller/certificates/signer/signer.go` (`handle`,
//! `isKubeAPIServerClient`/`validAPIServerClientUsages`, `isKubeletClient`, `signingDuration`),
//! `pkg/controller/certificates/authority/policies.go` (`PermissiveSigningPolicy.apply` with the
//! signer's 5-minute backdate and 8-hour short lifetime, `keyUsagesFromStrings`),
//! `authority.go` (`Sign`: the request's subject, names and key) and
//! `k8s.io/api/certificates/v1` `ValidateKubeletClientCSR`.
//!
//! Flotilla signs `kubernetes.io/kube-apiserver-client` and
//! `kubernetes.io/kube-apiserver-client-kubelet` from its one cluster CA, the CA its API server
//! trusts for client certificates (as kubeadm's clusters do). `kubernetes.io/kubelet-serving`
//! is not signed: Flotilla reaches no kubelets, and that CA is also the one clients trust for
//! the API server itself, so a serving certificate from it would vouch for servers nobody asked
//! it to.

use std::time::{Duration, SystemTime};

use rcgen::{ExtendedKeyUsagePurpose, KeyUsagePurpose, SanType};

use super::{KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, Request};

/// The signer names Flotilla's signer issues for.
pub const SERVED_SIGNERS: [&str; 2] = [KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET];
/// kube-controller-manager's `--cluster-signing-duration` default.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(8760 * 3600);
const BACKDATE: Duration = Duration::from_secs(5 * 60);
const SHORT: Duration = Duration::from_secs(8 * 3600);
const MIN_DURATION: Duration = Duration::from_secs(600);

/// The signer-specific checks (`isKubeAPIServerClient`, `isKubeletClient`): the reason of the
/// `Failed` condition when they fail.
pub fn check(request: &Request, usages: &[String], signer: &str) -> Result<(), String> {
    match signer {
        KUBE_APISERVER_CLIENT => api_server_client_usages(usages),
        KUBE_APISERVER_CLIENT_KUBELET => kubelet_client(request, usages),
        other => Err(format!("unrecognized signerName: {other:?}")),
    }
}

fn api_server_client_usages(usages: &[String]) -> Result<(), String> {
    let mut client_auth = false;
    for usage in usages {
        match usage.as_str() {
            "digital signature" | "key encipherment" => {}
            "client auth" => client_auth = true,
            other => return Err(format!("invalid usage for client certificate: {other}")),
        }
    }
    if !client_auth {
        return Err("missing required usage for client certificate: client auth".into());
    }
    Ok(())
}

fn kubelet_client(request: &Request, usages: &[String]) -> Result<(), String> {
    if request.organizations != ["system:nodes"] {
        return Err("subject organization is not system:nodes".into());
    }
    if !request.dns_names.is_empty() {
        return Err("DNS subjectAltNames are not allowed".into());
    }
    if !request.emails.is_empty() {
        return Err("Email subjectAltNames are not allowed".into());
    }
    if !request.ips.is_empty() {
        return Err("IP subjectAltNames are not allowed".into());
    }
    if !request.uris.is_empty() {
        return Err("URI subjectAltNames are not allowed".into());
    }
    if !request.common_name.starts_with("system:node:") {
        return Err("subject common name does not begin with system:node:".into());
    }
    let set: std::collections::BTreeSet<&str> = usages.iter().map(String::as_str).collect();
    let full = ["client auth", "digital signature", "key encipherment"];
    let without_rsa = ["client auth", "digital signature"];
    if set != full.into_iter().collect() && set != without_rsa.into_iter().collect() {
        return Err(format!("usages did not match [{}]", full.join(" ")));
    }
    Ok(())
}

/// `signingDuration`: the requested `expirationSeconds`, at least 10 minutes, at most `ttl`.
pub fn duration(ttl: Duration, expiration_seconds: Option<i64>) -> Duration {
    match expiration_seconds {
        None => ttl,
        Some(seconds) => {
            let requested = Duration::from_secs(seconds.max(0) as u64);
            requested.clamp(MIN_DURATION.min(ttl), ttl)
        }
    }
}

/// `PermissiveSigningPolicy.apply`'s validity: from 5 minutes ago; until `ttl` from now less
/// the backdate (the whole `ttl` from now for lifetimes under 8 hours); never past the CA.
pub fn validity(
    now: SystemTime,
    ttl: Duration,
    ca_not_after: SystemTime,
) -> Result<(SystemTime, SystemTime), String> {
    let not_before = now - BACKDATE;
    let mut not_after = if ttl < SHORT {
        now + ttl
    } else {
        now + ttl.saturating_sub(BACKDATE)
    };
    if not_after >= ca_not_after {
        not_after = ca_not_after;
    }
    if not_before >= ca_not_after {
        return Err("the signer has expired".into());
    }
    if now >= ca_not_after {
        return Err("refusing to sign a certificate that expired in the past".into());
    }
    Ok((not_before, not_after))
}

/// `keyUsagesFromStrings`: key usages, and extended key usages in Go's `ExtKeyUsage` order.
pub fn usages(
    usages: &[String],
) -> Result<(Vec<KeyUsagePurpose>, Vec<ExtendedKeyUsagePurpose>), String> {
    let mut key = Vec::new();
    let mut extended: Vec<(u8, ExtendedKeyUsagePurpose)> = Vec::new();
    let mut unrecognized = Vec::new();
    for usage in usages {
        let key_usage = match usage.as_str() {
            "signing" | "digital signature" => Some(KeyUsagePurpose::DigitalSignature),
            "content commitment" => Some(KeyUsagePurpose::ContentCommitment),
            "key encipherment" => Some(KeyUsagePurpose::KeyEncipherment),
            "key agreement" => Some(KeyUsagePurpose::KeyAgreement),
            "data encipherment" => Some(KeyUsagePurpose::DataEncipherment),
            "cert sign" => Some(KeyUsagePurpose::KeyCertSign),
            "crl sign" => Some(KeyUsagePurpose::CrlSign),
            "encipher only" => Some(KeyUsagePurpose::EncipherOnly),
            "decipher only" => Some(KeyUsagePurpose::DecipherOnly),
            _ => None,
        };
        if let Some(k) = key_usage {
            if !key.contains(&k) {
                key.push(k);
            }
            continue;
        }
        let ext = match usage.as_str() {
            "any" => Some((0, ExtendedKeyUsagePurpose::Any)),
            "server auth" => Some((1, ExtendedKeyUsagePurpose::ServerAuth)),
            "client auth" => Some((2, ExtendedKeyUsagePurpose::ClientAuth)),
            "code signing" => Some((3, ExtendedKeyUsagePurpose::CodeSigning)),
            "email protection" | "s/mime" => Some((4, ExtendedKeyUsagePurpose::EmailProtection)),
            "ipsec end system" => Some((5, other(&[1, 3, 6, 1, 5, 5, 7, 3, 5]))),
            "ipsec tunnel" => Some((6, other(&[1, 3, 6, 1, 5, 5, 7, 3, 6]))),
            "ipsec user" => Some((7, other(&[1, 3, 6, 1, 5, 5, 7, 3, 7]))),
            "timestamping" => Some((8, ExtendedKeyUsagePurpose::TimeStamping)),
            "ocsp signing" => Some((9, ExtendedKeyUsagePurpose::OcspSigning)),
            "microsoft sgc" => Some((10, other(&[1, 3, 6, 1, 4, 1, 311, 10, 3, 3]))),
            "netscape sgc" => Some((11, other(&[2, 16, 840, 1, 113730, 4, 1]))),
            _ => None,
        };
        match ext {
            Some((order, purpose)) => {
                if !extended.iter().any(|(o, _)| *o == order) {
                    extended.push((order, purpose));
                }
            }
            None => unrecognized.push(format!("{usage:?}")),
        }
    }
    if !unrecognized.is_empty() {
        return Err(format!(
            "unrecognized usage values: [{}]",
            unrecognized.join(" ")
        ));
    }
    extended.sort_by_key(|(order, _)| *order);
    Ok((key, extended.into_iter().map(|(_, p)| p).collect()))
}

fn other(oid: &[u64]) -> ExtendedKeyUsagePurpose {
    ExtendedKeyUsagePurpose::Other(oid.to_vec())
}

/// The request's subject alternative names, as `Sign` copies them.
pub fn sans(request: &Request) -> Result<Vec<SanType>, String> {
    let mut sans = Vec::new();
    for name in &request.dns_names {
        sans.push(SanType::DnsName(
            name.clone().try_into().map_err(|e| format!("{e}"))?,
        ));
    }
    for email in &request.emails {
        sans.push(SanType::Rfc822Name(
            email.clone().try_into().map_err(|e| format!("{e}"))?,
        ));
    }
    for ip in &request.ips {
        sans.push(SanType::IpAddress(*ip));
    }
    for uri in &request.uris {
        sans.push(SanType::URI(
            uri.clone().try_into().map_err(|e| format!("{e}"))?,
        ));
    }
    Ok(sans)
}
