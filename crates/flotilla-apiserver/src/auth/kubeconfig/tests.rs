use std::os::unix::fs::PermissionsExt;

use yaml_serde::Value;

use super::*;

const CA: &str = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
const CERT: &str = "-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n";
const KEY: &str = "-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n";

fn creds() -> KubeconfigCredentials<'static> {
    KubeconfigCredentials {
        server_url: "https://127.0.0.1:6443",
        ca_pem: CA,
        client_cert_pem: CERT,
        client_key_pem: KEY,
    }
}

fn field<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(value, |v, key| &v[*key])
}

fn decoded(value: &Value) -> String {
    let text = value.as_str().expect("base64 string");
    String::from_utf8(STANDARD.decode(text).expect("base64")).expect("utf8")
}

#[test]
fn written_kubeconfig_parses_back_with_inline_credentials() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("new-dir").join("kubeconfig");
    write_kubeconfig(&path, &creds(), &KubeconfigNames::default()).expect("write");

    let mode = std::fs::metadata(&path)
        .expect("metadata")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let doc: Value =
        yaml_serde::from_str(&std::fs::read_to_string(&path).expect("read")).expect("yaml");

    assert_eq!(doc["apiVersion"].as_str(), Some("v1"));
    assert_eq!(doc["kind"].as_str(), Some("Config"));
    assert_eq!(doc["current-context"].as_str(), Some("flotilla"));
    let cluster = &doc["clusters"][0];
    assert_eq!(cluster["name"].as_str(), Some("flotilla"));
    assert_eq!(
        field(cluster, &["cluster", "server"]).as_str(),
        Some("https://127.0.0.1:6443")
    );
    assert_eq!(
        decoded(field(cluster, &["cluster", "certificate-authority-data"])),
        CA
    );
    let context = &doc["contexts"][0];
    assert_eq!(context["name"].as_str(), Some("flotilla"));
    assert_eq!(
        field(context, &["context", "cluster"]).as_str(),
        Some("flotilla")
    );
    assert_eq!(
        field(context, &["context", "user"]).as_str(),
        Some("flotilla-admin")
    );
    let user = &doc["users"][0];
    assert_eq!(user["name"].as_str(), Some("flotilla-admin"));
    assert_eq!(
        decoded(field(user, &["user", "client-certificate-data"])),
        CERT
    );
    assert_eq!(decoded(field(user, &["user", "client-key-data"])), KEY);
    assert_eq!(doc["clusters"].as_sequence().map(Vec::len), Some(1));
}

#[test]
fn custom_names_are_used_consistently() {
    let names = KubeconfigNames {
        cluster: "east",
        context: "east-admin",
        user: "ops",
    };
    let doc: Value =
        yaml_serde::from_str(&render_kubeconfig(&creds(), &names).expect("render")).expect("yaml");
    assert_eq!(doc["current-context"].as_str(), Some("east-admin"));
    assert_eq!(
        doc["contexts"][0]["context"]["cluster"].as_str(),
        Some("east")
    );
    assert_eq!(doc["contexts"][0]["context"]["user"].as_str(), Some("ops"));
    assert_eq!(doc["clusters"][0]["name"].as_str(), Some("east"));
    assert_eq!(doc["users"][0]["name"].as_str(), Some("ops"));
}

#[test]
fn credentials_debug_hides_the_key() {
    assert!(!format!("{:?}", creds()).contains("PRIVATE KEY"));
}

#[test]
fn admin_credentials_come_from_the_pki() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::load_or_create(dir.path(), &[]).expect("pki");
    let creds = KubeconfigCredentials::admin(&pki, "https://localhost:6443");
    let yaml = render_kubeconfig(&creds, &KubeconfigNames::default()).expect("render");
    let doc: Value = yaml_serde::from_str(&yaml).expect("yaml");
    let user = &doc["users"][0]["user"];
    assert_eq!(decoded(&user["client-key-data"]), pki.admin().key_pem);
    assert_eq!(
        decoded(&user["client-certificate-data"]),
        pki.admin().cert_pem
    );
    assert_eq!(
        decoded(&doc["clusters"][0]["cluster"]["certificate-authority-data"]),
        pki.ca_cert_pem()
    );
}
