//! Accepting TLS connections: the handshake, then the client certificate's identity read once
//! per connection so the HTTP layer can attach it to every request on that connection (for
//! example as a request extension) and pass it to [`Authenticator::authenticate`].
//!
//! A typical accept loop, with a handshake timeout so a silent peer cannot hold a task:
//!
//! ```text
//! let acceptor = TlsAcceptor::from(tls::server_config(&pki, &[pki.ca_cert_der().clone()])?);
//! loop {
//!     let (tcp, _) = listener.accept().await?;
//!     let acceptor = acceptor.clone();
//!     tokio::spawn(async move {
//!         let Ok(Ok((tls, cert_user))) = timeout(HANDSHAKE, serve::accept(&acceptor, tcp)).await
//!         else { return };
//!         // serve `tls` with hyper-util's auto builder; clone `cert_user` into each request
//!     });
//! }
//! ```
//!
//! [`Authenticator::authenticate`]: super::authn::Authenticator::authenticate

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use super::AuthError;
use super::authn::{UserInfo, user_from_certificate};

/// Completes the TLS handshake on `io` and returns the stream with the user named by the client
/// certificate, if the client sent one (rustls has already verified it against the client CAs;
/// a certificate from another CA fails the handshake).
pub async fn accept<IO>(
    acceptor: &TlsAcceptor,
    io: IO,
) -> Result<(TlsStream<IO>, Option<UserInfo>), AuthError>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let stream = acceptor.accept(io).await.map_err(AuthError::Handshake)?;
    let user = stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first())
        .and_then(user_from_certificate);
    Ok((stream, user))
}
