//! Subjects with several `O` attributes, which is how Kubernetes puts a certificate user in more
//! than one group. rcgen's distinguished name holds one value per attribute type, so for those
//! certificates we let rcgen build and sign the certificate, then swap in our own DER subject and
//! sign the new to-be-signed bytes again with the CA key.

use rcgen::{KeyPair, SigningKey};
use x509_parser::prelude::{FromDer, X509Certificate};

const TAG_SEQUENCE: u8 = 0x30;
const TAG_SET: u8 = 0x31;
const TAG_OID: u8 = 0x06;
const TAG_UTF8_STRING: u8 = 0x0c;
const TAG_BIT_STRING: u8 = 0x03;
/// id-at-organizationName, 2.5.4.10.
const OID_ORGANIZATION: [u8; 3] = [0x55, 0x04, 0x0a];
/// id-at-commonName, 2.5.4.3.
const OID_COMMON_NAME: [u8; 3] = [0x55, 0x04, 0x03];

/// DER `Name` with one RDN per organization, then the common name (the order Go's `pkix.Name`
/// produces, so our certificates look like those kubeadm issues).
pub(super) fn encode_name(common_name: &str, organizations: &[String]) -> Vec<u8> {
    let mut rdns = Vec::new();
    for org in organizations {
        rdns.extend(rdn(&OID_ORGANIZATION, org));
    }
    rdns.extend(rdn(&OID_COMMON_NAME, common_name));
    tlv(TAG_SEQUENCE, &rdns)
}

/// Returns `cert_der` with its subject replaced by `subject_der`, re-signed by `signer` (the key
/// that signed the original, so the signature algorithm fields stay correct).
pub(super) fn with_subject(
    cert_der: &[u8],
    subject_der: &[u8],
    signer: &KeyPair,
) -> Result<Vec<u8>, String> {
    let (_, cert) = X509Certificate::from_der(cert_der).map_err(|e| e.to_string())?;
    let tbs: &[u8] = cert.tbs_certificate.as_ref();
    let old_subject = cert.tbs_certificate.subject.as_raw();
    // Both slices borrow from `cert_der`; their distance locates the subject inside the TBS.
    let start = (old_subject.as_ptr() as usize)
        .checked_sub(tbs.as_ptr() as usize)
        .ok_or("subject lies before the TBS certificate")?;
    let end = start + old_subject.len();
    let (tbs_header, _) = tlv_lengths(tbs).ok_or("malformed TBS header")?;
    if start < tbs_header || end > tbs.len() {
        return Err("subject lies outside the TBS certificate".into());
    }
    let mut content = Vec::with_capacity(tbs.len() + subject_der.len());
    content.extend_from_slice(&tbs[tbs_header..start]);
    content.extend_from_slice(subject_der);
    content.extend_from_slice(&tbs[end..]);
    let new_tbs = tlv(TAG_SEQUENCE, &content);

    let (outer_header, _) = tlv_lengths(cert_der).ok_or("malformed certificate header")?;
    let after_tbs = cert_der
        .get(outer_header + tbs.len()..)
        .ok_or("certificate shorter than its TBS")?;
    let (alg_header, alg_len) = tlv_lengths(after_tbs).ok_or("malformed signature algorithm")?;
    let algorithm = after_tbs
        .get(..alg_header + alg_len)
        .ok_or("truncated signature algorithm")?;

    let signature = signer.sign(&new_tbs).map_err(|e| e.to_string())?;
    let mut bits = Vec::with_capacity(signature.len() + 1);
    bits.push(0); // no unused bits
    bits.extend_from_slice(&signature);

    let mut body = new_tbs;
    body.extend_from_slice(algorithm);
    body.extend(tlv(TAG_BIT_STRING, &bits));
    Ok(tlv(TAG_SEQUENCE, &body))
}

fn rdn(oid: &[u8], value: &str) -> Vec<u8> {
    let mut attribute = tlv(TAG_OID, oid);
    attribute.extend(tlv(TAG_UTF8_STRING, value.as_bytes()));
    tlv(TAG_SET, &tlv(TAG_SEQUENCE, &attribute))
}

fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 6);
    out.push(tag);
    if content.len() < 0x80 {
        out.push(content.len() as u8);
    } else {
        let bytes = content.len().to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(content);
    out
}

/// (header length, content length) of the DER element at the start of `bytes`, for the
/// single-byte tags certificates use.
fn tlv_lengths(bytes: &[u8]) -> Option<(usize, usize)> {
    let first = *bytes.get(1)?;
    if first < 0x80 {
        return Some((2, usize::from(first)));
    }
    let count = usize::from(first & 0x7f);
    if count == 0 || count > 4 {
        return None;
    }
    let len = bytes
        .get(2..2 + count)?
        .iter()
        .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
    Some((2 + count, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tlv_uses_long_form_lengths_past_127_bytes() {
        let short = tlv(TAG_SEQUENCE, &[0; 127]);
        assert_eq!(&short[..2], &[0x30, 127]);
        let long = tlv(TAG_SEQUENCE, &[0; 300]);
        assert_eq!(&long[..4], &[0x30, 0x82, 0x01, 0x2c]);
        assert_eq!(tlv_lengths(&long), Some((4, 300)));
        assert_eq!(tlv_lengths(&short), Some((2, 127)));
    }

    #[test]
    fn encoded_name_parses_with_every_organization() {
        use x509_parser::x509::X509Name;
        let der = encode_name("alice", &["dev".into(), "ops".into(), "système".into()]);
        let (rest, name) = X509Name::from_der(&der).expect("parse name");
        assert!(rest.is_empty());
        let orgs: Vec<_> = name
            .iter_organization()
            .map(|a| a.as_str().expect("utf8"))
            .collect();
        assert_eq!(orgs, ["dev", "ops", "système"]);
        let cn: Vec<_> = name
            .iter_common_name()
            .map(|a| a.as_str().expect("utf8"))
            .collect();
        assert_eq!(cn, ["alice"]);
    }
}
