//! A `kube::Client` over the API server's tower service, with no socket: how components inside
//! `flotilla up` talk to the control plane, with exactly the HTTP semantics of a remote client.

use tower::ServiceBuilder;

use crate::auth::authn::UserInfo;
use crate::server::{ApiServer, Identity};

/// A client acting as `user` (for in-process components, an identity in the admin group).
pub fn in_process(server: &ApiServer, user: UserInfo) -> kube::Client {
    let identity = Identity(Some(user));
    let service = ServiceBuilder::new()
        .map_request(move |mut request: http::Request<kube::client::Body>| {
            request.extensions_mut().insert(identity.clone());
            request
        })
        .service(server.clone().router());
    kube::Client::new(service, "default")
}
