//! A `kube::Client` over the API server's tower service, with no socket: how components inside
//! `flotilla up` talk to the control plane, with exactly the HTTP semantics of a remote client.

use tower::ServiceBuilder;

use crate::auth::authn::UserInfo;
use crate::server::{ApiServer, Identity};

/// A client acting as `user` (for in-process components, an identity in the admin group).
pub fn in_process(server: &ApiServer, user: UserInfo) -> kube::Client {
    client(server, user, None)
}

/// As [`in_process`], every request carrying the `User-Agent` `user_agent`. A write that names
/// no field manager is recorded under the agent's first word (kube-apiserver's rule), so
/// components named like Karmada's (`karmada-controller-manager/…`) show up in
/// `metadata.managedFields` as Karmada's do, not as `unknown`.
pub fn in_process_as(server: &ApiServer, user: UserInfo, user_agent: &str) -> kube::Client {
    client(server, user, http::HeaderValue::from_str(user_agent).ok())
}

fn client(server: &ApiServer, user: UserInfo, agent: Option<http::HeaderValue>) -> kube::Client {
    let identity = Identity(Some(user));
    let service = ServiceBuilder::new()
        .map_request(move |mut request: http::Request<kube::client::Body>| {
            request.extensions_mut().insert(identity.clone());
            if let Some(agent) = &agent {
                request
                    .headers_mut()
                    .entry(http::header::USER_AGENT)
                    .or_insert_with(|| agent.clone());
            }
            request
        })
        .service(server.clone().router());
    kube::Client::new(service, "default")
}
