//! Errors of the simulator, each naming the step that failed.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("{step} failed")]
    Api {
        step: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("cannot start the API server of cluster {cluster}: {message}")]
    ApiServer { cluster: String, message: String },
    #[error("credentials of cluster {cluster}")]
    Auth {
        cluster: String,
        #[source]
        source: flotilla_apiserver::auth::AuthError,
    },
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen on {address}")]
    Listen {
        address: String,
        #[source]
        source: std::io::Error,
    },
    #[error("no cluster named {0:?}")]
    UnknownCluster(String),
    #[error("fault control: {0}")]
    Control(String),
    #[error("{0}")]
    Internal(String),
}

impl SimError {
    pub fn internal(message: impl Into<String>) -> Self {
        SimError::Internal(message.into())
    }
}
