//! Karmada's agent CSR approver (`agentcsrapproving`, Karmada's `agent-csr-approving-controller`,
//! `pkg/controllers/certificate/approver/agent_csr_approving.go`): a pending request for signer
//! `kubernetes.io/kube-apiserver-client` whose certificate would be a karmada-agent's (subject
//! organization exactly `system:karmada:agents`, common name `system:karmada:agent:<…>`, no
//! DNS/email/IP/URI names, usages `digital signature` + `client auth` with or without
//! `key encipherment`) is approved when a SubjectAccessReview says its requester may `create`
//! `certificatesigningrequests/selfclusteragent` (the agent renewing its own certificate: the
//! requester is the subject's common name) or `certificatesigningrequests/clusteragent` (a
//! bootstrap token registering a cluster). The approval condition is `Approved`, reason
//! `AutoApproved`, with Karmada's message; a request no review allows is left pending for a
//! person (`kubectl certificate approve`).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::sync::Arc;

use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition,
};
use kube::api::{Api, PostParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use tracing::{debug, info, warn};

use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "agentcsrapproving";
/// Karmada's controller name.
pub const CONTROLLER_NAME: &str = "agent-csr-approving-controller";
/// The signer of agent certificates.
pub const SIGNER: &str = "kubernetes.io/kube-apiserver-client";
const AGENT_GROUP: &str = "system:karmada:agents";
const AGENT_USER_PREFIX: &str = "system:karmada:agent:";

/// What an agent request asks for, read from its PKCS#10 request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject {
    pub common_name: String,
    pub organizations: Vec<String>,
    /// Whether it asks for any DNS, email, IP or URI name (in that order of Karmada's checks).
    pub names: [bool; 4],
}

/// `ValidateAgentCSR`: why a request is not an agent's, if it is not.
pub fn validate_agent_csr(subject: &Subject, usages: &[String]) -> Result<(), String> {
    if subject.organizations != [AGENT_GROUP] {
        return Err("subject organization is not system:karmada:agents".into());
    }
    let kinds = ["DNS", "email", "IP", "URI"];
    for (present, kind) in subject.names.iter().zip(kinds) {
        if *present {
            return Err(format!("{kind} subjectAltNames are not allowed"));
        }
    }
    if !subject.common_name.starts_with(AGENT_USER_PREFIX) {
        return Err("subject common name does not begin with system:karmada:agent: prefix".into());
    }
    let set: BTreeSet<&str> = usages.iter().map(String::as_str).collect();
    let full: BTreeSet<&str> = ["client auth", "digital signature", "key encipherment"].into();
    let short: BTreeSet<&str> = ["client auth", "digital signature"].into();
    if set != full && set != short {
        return Err("usages did not match [client auth digital signature key encipherment]".into());
    }
    Ok(())
}

/// One way an agent request is recognized: the SubjectAccessReview subresource that must allow
/// it, and the approval message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recognizer {
    pub subresource: &'static str,
    pub message: &'static str,
    /// The requester must be the subject's common name (an agent renewing).
    pub self_request: bool,
}

/// Karmada's recognizers, in the order they are tried.
pub const RECOGNIZERS: [Recognizer; 2] = [
    Recognizer {
        subresource: "selfclusteragent",
        message: "Auto approving self karmada agent certificate after SubjectAccessReview.",
        self_request: true,
    },
    Recognizer {
        subresource: "clusteragent",
        message: "Auto approving karmada agent certificate after SubjectAccessReview.",
        self_request: false,
    },
];

/// The recognizers that match `csr` (nothing for a request that is decided, issued, another
/// signer's or not an agent's).
pub fn recognized(csr: &CertificateSigningRequest) -> Result<Vec<Recognizer>, String> {
    let status = csr.status.as_ref();
    if status
        .and_then(|s| s.certificate.as_ref())
        .is_some_and(|c| !c.0.is_empty())
    {
        return Ok(Vec::new());
    }
    let decided = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Approved" || c.type_ == "Denied");
    if decided || csr.spec.signer_name != SIGNER {
        return Ok(Vec::new());
    }
    let subject = parse_subject(&csr.spec.request.0)?;
    let usages = csr.spec.usages.clone().unwrap_or_default();
    if validate_agent_csr(&subject, &usages).is_err() {
        return Ok(Vec::new());
    }
    let requester = csr.spec.username.as_deref().unwrap_or("");
    Ok(RECOGNIZERS
        .into_iter()
        .filter(|r| !r.self_request || requester == subject.common_name)
        .collect())
}

/// The subject of a PEM `CERTIFICATE REQUEST`.
pub fn parse_subject(pem: &[u8]) -> Result<Subject, String> {
    use x509_parser::certification_request::X509CertificationRequest;
    use x509_parser::prelude::{FromDer, GeneralName, ParsedExtension};
    let mut reader = pem;
    let der = loop {
        match rustls_pemfile::read_one(&mut reader) {
            Ok(Some(rustls_pemfile::Item::Csr(der))) => break der,
            Ok(Some(_)) => continue,
            Ok(None) | Err(_) => return Err("PEM block type must be CERTIFICATE REQUEST".into()),
        }
    };
    let (_, csr) = X509CertificationRequest::from_der(&der).map_err(|e| e.to_string())?;
    let info = &csr.certification_request_info;
    let text = |a: &x509_parser::x509::AttributeTypeAndValue<'_>| {
        a.as_str().map(str::to_owned).unwrap_or_default()
    };
    let mut subject = Subject {
        common_name: info
            .subject
            .iter_common_name()
            .next()
            .map(text)
            .unwrap_or_default(),
        organizations: info.subject.iter_organization().map(text).collect(),
        names: [false; 4],
    };
    for extension in csr.requested_extensions().into_iter().flatten() {
        if let ParsedExtension::SubjectAlternativeName(san) = extension {
            for name in &san.general_names {
                match name {
                    GeneralName::DNSName(_) => subject.names[0] = true,
                    GeneralName::RFC822Name(_) => subject.names[1] = true,
                    GeneralName::IPAddress(_) => subject.names[2] = true,
                    GeneralName::URI(_) => subject.names[3] = true,
                    _ => {}
                }
            }
        }
    }
    Ok(subject)
}

struct Controller {
    client: kube::Client,
    requests: Store<CertificateSigningRequest>,
    queue: WorkQueue<String>,
}

/// The `start` of the `agentcsrapproving` entry in [`crate::CONTROLLERS`].
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let requests = context.informers.all::<CertificateSigningRequest>();
    let this = Arc::new(Controller {
        client: context.client.clone(),
        requests: requests.store(),
        queue: WorkQueue::named(CONTROLLER_NAME),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(
        &requests,
        move |event: WatchEvent<&CertificateSigningRequest>| match event {
            WatchEvent::Apply(csr) | WatchEvent::InitApply(csr)
                if csr.spec.signer_name == SIGNER =>
            {
                let priority = match event {
                    WatchEvent::InitApply(_) => Priority::Low,
                    _ => Priority::High,
                };
                me.queue
                    .add_with(csr.metadata.name.clone().unwrap_or_default(), priority);
            }
            _ => {}
        },
    );
    if !until_ready(&shutdown, requests.wait_until_ready()).await {
        return;
    }
    let me = this.clone();
    tasks.spawn(async move { me.work().await });
    info!("agent CSR approving controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl Controller {
    async fn work(&self) {
        while let Some(name) = self.queue.next().await {
            match self.reconcile(&name).await {
                Ok(()) => self.queue.forget(&name),
                Err(error) => {
                    warn!(csr = %name, %error, "agent CSR approval failed; will retry");
                    self.queue.add_rate_limited(name.clone());
                }
            }
            self.queue.done(&name);
        }
    }

    async fn reconcile(&self, name: &str) -> Result<(), kube::Error> {
        let Some(cached) = self.requests.get(&ObjectRef::new(name)) else {
            return Ok(());
        };
        if cached.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let recognizers = match recognized(&cached) {
            Ok(r) => r,
            Err(reason) => {
                warn!(csr = name, %reason, "unable to parse the certificate signing request");
                return Ok(());
            }
        };
        for recognizer in &recognizers {
            if self.authorize(&cached, recognizer.subresource).await? {
                let mut csr = (*cached).clone();
                let status = csr.status.get_or_insert_with(Default::default);
                status.conditions.get_or_insert_with(Vec::new).push(
                    CertificateSigningRequestCondition {
                        type_: "Approved".into(),
                        status: "True".into(),
                        reason: Some("AutoApproved".into()),
                        message: Some(recognizer.message.into()),
                        ..Default::default()
                    },
                );
                Api::<CertificateSigningRequest>::all(self.client.clone())
                    .replace_subresource("approval", name, &PostParams::default(), &csr)
                    .await?;
                info!(
                    csr = name,
                    subresource = recognizer.subresource,
                    "approved the agent's certificate signing request"
                );
                return Ok(());
            }
        }
        if !recognizers.is_empty() {
            debug!(
                csr = name,
                "recognized an agent CSR but no SubjectAccessReview allowed it"
            );
        }
        Ok(())
    }

    /// Whether the requester may `create` `certificatesigningrequests/<subresource>`.
    async fn authorize(
        &self,
        csr: &CertificateSigningRequest,
        subresource: &str,
    ) -> Result<bool, kube::Error> {
        let extra: Option<BTreeMap<String, Vec<String>>> = csr.spec.extra.clone();
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: csr.spec.username.clone(),
                uid: csr.spec.uid.clone(),
                groups: csr.spec.groups.clone(),
                extra,
                resource_attributes: Some(ResourceAttributes {
                    group: Some("certificates.k8s.io".into()),
                    resource: Some("certificatesigningrequests".into()),
                    verb: Some("create".into()),
                    subresource: Some(subresource.into()),
                    version: Some("*".into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        Ok(answer.status.is_some_and(|s| s.allowed))
    }
}

#[cfg(test)]
mod tests;
