use rustls::ClientConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{PrivateKeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use super::*;
use crate::auth::authn::UserInfo;
use crate::auth::pki::IssuedCert;
use crate::auth::serve;

struct Outcome {
    /// What the server's accept returned: the certificate user and the negotiated ALPN protocol.
    server: Result<(Option<UserInfo>, Option<Vec<u8>>), AuthError>,
    /// Whether the client read the server's greeting after the handshake.
    client_read_greeting: bool,
}

fn client_config(pki: &Pki, client_cert: Option<&IssuedCert>) -> Arc<ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pki.ca_cert_der().clone()).expect("CA root");
    let builder = ClientConfig::builder_with_provider(ring_provider())
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots);
    let mut config = match client_cert {
        None => builder.with_no_client_auth(),
        Some(issued) => {
            let cert = CertificateDer::from_pem_slice(issued.cert_pem.as_bytes()).expect("cert");
            let key = PrivateKeyDer::from_pem_slice(issued.key_pem.as_bytes()).expect("key");
            builder
                .with_client_auth_cert(vec![cert], key)
                .expect("client auth")
        }
    };
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(config)
}

/// One connection over loopback: the server accepts and greets, the client connects to
/// `server_name` and reads the greeting.
async fn connect(
    server: Arc<ServerConfig>,
    client: Arc<ClientConfig>,
    server_name: &str,
) -> Outcome {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let addr = listener.local_addr().expect("local addr");
    let acceptor = TlsAcceptor::from(server);
    let server_task = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.expect("accept");
        let (mut tls, user) = serve::accept(&acceptor, tcp).await?;
        let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        tls.write_all(b"hello").await.expect("greet");
        tls.shutdown().await.expect("close_notify");
        Ok((user, alpn))
    });
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let name = ServerName::try_from(server_name.to_string()).expect("server name");
    let client_read_greeting = match TlsConnector::from(client).connect(name, tcp).await {
        Ok(mut tls) => {
            let mut buf = Vec::new();
            tls.read_to_end(&mut buf).await.is_ok() && buf == b"hello"
        }
        Err(_) => false,
    };
    let server = server_task.await.expect("server task");
    Outcome {
        server,
        client_read_greeting,
    }
}

fn setup() -> (tempfile::TempDir, Pki, Arc<ServerConfig>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let pki = Pki::load_or_create(dir.path(), &[]).expect("pki");
    let config = server_config(&pki, &[pki.ca_cert_der().clone()]).expect("server config");
    (dir, pki, config)
}

#[tokio::test]
async fn admin_certificate_identifies_flotilla_admin_over_h2() {
    let (_dir, pki, server) = setup();
    let outcome = connect(server, client_config(&pki, Some(pki.admin())), "localhost").await;
    let (user, alpn) = outcome.server.expect("handshake");
    let user = user.expect("certificate user");
    assert_eq!(user.name, "flotilla-admin");
    assert_eq!(user.groups, ["system:masters"]);
    assert_eq!(alpn.as_deref(), Some(&b"h2"[..]));
    assert!(outcome.client_read_greeting);
}

#[tokio::test]
async fn client_without_certificate_connects_as_anonymous() {
    let (_dir, pki, server) = setup();
    let outcome = connect(server, client_config(&pki, None), "127.0.0.1").await;
    let (user, _) = outcome.server.expect("handshake without client cert");
    assert_eq!(user, None);
    assert!(outcome.client_read_greeting);
}

#[tokio::test]
async fn certificate_from_another_ca_fails_the_handshake() {
    let (_dir, pki, server) = setup();
    let other_dir = tempfile::tempdir().expect("tempdir");
    let other = Pki::load_or_create(other_dir.path(), &[]).expect("other pki");
    let outcome = connect(
        server,
        client_config(&pki, Some(other.admin())),
        "localhost",
    )
    .await;
    assert!(
        matches!(outcome.server, Err(AuthError::Handshake(_))),
        "{:?}",
        outcome.server.map(|_| ())
    );
    assert!(!outcome.client_read_greeting);
}

#[tokio::test]
async fn issued_certificate_with_several_groups_is_verified_and_read_back() {
    let (_dir, pki, server) = setup();
    let groups = vec!["system:nodes".to_string(), "dev".to_string()];
    let issued = pki.issue_client_cert("node-1", &groups).expect("issue");
    let outcome = connect(server, client_config(&pki, Some(&issued)), "::1").await;
    let user = outcome
        .server
        .expect("handshake")
        .0
        .expect("certificate user");
    assert_eq!((user.name.as_str(), user.groups), ("node-1", groups));
}

#[test]
fn install_crypto_provider_is_idempotent() {
    install_crypto_provider();
    install_crypto_provider();
    assert!(CryptoProvider::get_default().is_some());
}

#[test]
fn empty_client_ca_list_is_an_error() {
    let (_dir, pki, _) = setup();
    assert!(matches!(
        server_config(&pki, &[]),
        Err(AuthError::ClientVerifier(_))
    ));
}
