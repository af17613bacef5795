//! The unified-auth controller (`unifiedAuth`, Karmada's `unified-auth-controller`): for every
//! Cluster with `spec.impersonatorSecretRef`, the member gets — through Works in its execution
//! namespace, applied like any other — a ClusterRole `karmada-impersonator` allowing
//! `impersonate` of exactly the users, service accounts and groups that the control plane's RBAC
//! lets reach that cluster through the cluster proxy (subjects of ClusterRoleBindings whose
//! ClusterRole grants `clusters/proxy` in `cluster.karmada.io` for that cluster, or
//! `proxying/proxy` in `search.karmada.io`), and a ClusterRoleBinding `karmada-impersonator`
//! giving it to the member's ServiceAccount `karmada-impersonator` (in the namespace of the
//! impersonator Secret). The cluster proxy then sends a caller's requests with that account's
//! token, impersonating the caller, so the member's own RBAC decides (docs/clusters.md).
//!
//! A cluster is synced when it appears; a ClusterRole or ClusterRoleBinding change re-syncs the
//! clusters the role names (all of them when it names none). Each sync records
//! `SyncImpersonationConfigSucceed` (or `…Failed`, with the error) on the Cluster, as Karmada's.
//!
//! Behaviour of Karmada's `pkg/controllers/unifiedauth` and `pkg/util/rbac.go`.

use std::collections::BTreeSet;
use std::sync::Arc;

use flotilla_api::karmada::names::{execution_space_name, work_name};
use flotilla_api::karmada::{Cluster, Work, WorkSpec, WorkloadTemplate};
use flotilla_runtime::controller::{Tasks, until_ready};
use flotilla_runtime::events::{EventType, Recorder, Reporter};
use flotilla_runtime::{Priority, Shutdown, WorkQueue};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource as _;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event as WatchEvent;
use serde_json::json;
use tracing::{debug, info, warn};

use crate::binding::render::{EXECUTION_FINALIZER, MANAGED_LABEL};
use crate::binding::works::{WorkWrite, ensure_work};
use crate::manager::{Context, ControllerTask};

/// The `--controllers` name.
pub const NAME: &str = "unifiedAuth";
/// The ClusterRole, ClusterRoleBinding and ServiceAccount of the impersonator in a member.
pub const IMPERSONATOR: &str = "karmada-impersonator";

const CLUSTER_GROUP: &str = "cluster.karmada.io";
const CLUSTER_PROXY: &str = "clusters/proxy";
const SEARCH_GROUP: &str = "search.karmada.io";
const SEARCH_PROXY: &str = "proxying/proxy";

fn group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups
        .iter()
        .flatten()
        .any(|g| g == "*" || g == group)
}

fn resource_matches(rule: &PolicyRule, resource: &str) -> bool {
    rule.resources
        .iter()
        .flatten()
        .any(|r| r == "*" || r == resource)
}

fn name_matches(rule: &PolicyRule, name: &str) -> bool {
    rule.resource_names
        .as_ref()
        .is_none_or(|names| names.is_empty() || names.iter().any(|n| n == name))
}

/// Whether `role` lets its subjects reach `cluster` through a proxy.
fn grants_proxy(role: &ClusterRole, cluster: &str) -> bool {
    role.rules.iter().flatten().any(|rule| {
        (group_matches(rule, CLUSTER_GROUP)
            && resource_matches(rule, CLUSTER_PROXY)
            && name_matches(rule, cluster))
            || (group_matches(rule, SEARCH_GROUP) && resource_matches(rule, SEARCH_PROXY))
    })
}

/// The subjects the control plane lets reach `cluster` through the proxy.
pub fn proxy_subjects<'a>(
    cluster: &str,
    roles: impl IntoIterator<Item = &'a ClusterRole>,
    bindings: impl IntoIterator<Item = &'a ClusterRoleBinding>,
) -> Vec<Subject> {
    let granting: BTreeSet<&str> = roles
        .into_iter()
        .filter(|role| grants_proxy(role, cluster))
        .filter_map(|role| role.metadata.name.as_deref())
        .collect();
    bindings
        .into_iter()
        .filter(|b| b.role_ref.kind == "ClusterRole" && granting.contains(b.role_ref.name.as_str()))
        .flat_map(|b| b.subjects.iter().flatten().cloned())
        .collect()
}

/// Karmada's `GenerateImpersonationRules`: `impersonate` on users, serviceaccounts and groups,
/// each limited to the subjects' names (sorted, once each); no rule for a kind without subjects.
pub fn impersonation_rules(subjects: &[Subject]) -> Vec<PolicyRule> {
    let names = |kind: &str| -> Vec<String> {
        subjects
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| s.name.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    [
        ("User", "users"),
        ("ServiceAccount", "serviceaccounts"),
        ("Group", "groups"),
    ]
    .into_iter()
    .filter_map(|(kind, resource)| {
        let names = names(kind);
        (!names.is_empty()).then(|| PolicyRule {
            verbs: vec!["impersonate".to_owned()],
            api_groups: Some(vec![String::new()]),
            resources: Some(vec![resource.to_owned()]),
            resource_names: Some(names),
            ..PolicyRule::default()
        })
    })
    .collect()
}

/// The two Works that carry the impersonator's ClusterRole and ClusterRoleBinding to `cluster`.
pub fn impersonation_works(cluster: &Cluster, rules: &[PolicyRule]) -> Option<[Work; 2]> {
    let secret = cluster.spec.impersonator_secret_ref.as_ref()?;
    // `karmada.io/managed` marks the member objects as Karmada's, as every Work's manifest is
    // (Karmada's `CreateOrUpdateWork`): the execution controller then updates them.
    let labels = json!({"karmada.io/system": "true", MANAGED_LABEL: "true"});
    let role = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": IMPERSONATOR, "labels": labels},
        "rules": rules,
    });
    let binding = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": IMPERSONATOR, "labels": labels},
        "subjects": [{"kind": "ServiceAccount", "namespace": secret.namespace, "name": IMPERSONATOR}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": IMPERSONATOR},
    });
    let work = |kind: &str, manifest: serde_json::Value| Work {
        metadata: ObjectMeta {
            name: Some(work_name(kind, IMPERSONATOR, "")),
            namespace: Some(execution_space_name(cluster.name())),
            finalizers: Some(vec![EXECUTION_FINALIZER.to_owned()]),
            owner_references: Some(vec![OwnerReference {
                api_version: "cluster.karmada.io/v1alpha1".to_owned(),
                kind: "Cluster".to_owned(),
                name: cluster.name().to_owned(),
                uid: cluster.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: WorkSpec {
            workload: WorkloadTemplate {
                manifests: vec![manifest.into()],
            },
            ..WorkSpec::default()
        },
        ..Work::default()
    };
    Some([
        work("ClusterRole", role),
        work("ClusterRoleBinding", binding),
    ])
}

struct UnifiedAuth {
    client: kube::Client,
    recorder: Recorder,
    queue: WorkQueue<String>,
    clusters: Store<Cluster>,
    roles: Store<ClusterRole>,
    bindings: Store<ClusterRoleBinding>,
    works: Store<Work>,
}

/// `CONTROLLERS` entry point.
pub fn start(context: Context, shutdown: Shutdown) -> ControllerTask {
    Box::pin(run(context, shutdown))
}

async fn run(context: Context, shutdown: Shutdown) {
    let clusters = context.informers.all::<Cluster>();
    let roles = context.informers.all::<ClusterRole>();
    let bindings = context.informers.all::<ClusterRoleBinding>();
    let works = context.informers.all::<Work>();
    let this = Arc::new(UnifiedAuth {
        recorder: Recorder::new(
            context.client.clone(),
            Reporter {
                controller: "unified-auth-controller".into(),
                instance: None,
            },
        ),
        client: context.client.clone(),
        queue: WorkQueue::named("unified-auth-controller"),
        clusters: clusters.store(),
        roles: roles.store(),
        bindings: bindings.store(),
        works: works.store(),
    });
    let mut tasks = Tasks::new();
    let me = this.clone();
    tasks.subscribe(&clusters, move |e: WatchEvent<&Cluster>| match e {
        // Karmada syncs a cluster when it is created (and on RBAC changes), not on its updates;
        // the impersonator reference set by a later update is picked up here too.
        WatchEvent::Apply(c) | WatchEvent::InitApply(c)
            if c.spec.impersonator_secret_ref.is_some() =>
        {
            let priority = match e {
                WatchEvent::InitApply(_) => Priority::Low,
                _ => Priority::High,
            };
            me.queue.add_with(c.name().to_owned(), priority);
        }
        _ => {}
    });
    let me = this.clone();
    tasks.subscribe(&roles, move |e: WatchEvent<&ClusterRole>| {
        if let WatchEvent::Apply(role) | WatchEvent::Delete(role) = e {
            me.requeue_for(role);
        }
    });
    let me = this.clone();
    tasks.subscribe(&bindings, move |e: WatchEvent<&ClusterRoleBinding>| {
        if let WatchEvent::Apply(binding) | WatchEvent::Delete(binding) = e
            && binding.role_ref.kind == "ClusterRole"
            && let Some(role) = me.roles.get(&ObjectRef::new(&binding.role_ref.name))
        {
            me.requeue_for(&role);
        }
    });
    let ready = async {
        clusters.wait_until_ready().await;
        roles.wait_until_ready().await;
        bindings.wait_until_ready().await;
        works.wait_until_ready().await;
    };
    if !until_ready(&shutdown, ready).await {
        return;
    }
    let me = this.clone();
    tasks.workers(
        &this.queue,
        1,
        move |name| {
            let me = me.clone();
            async move { me.reconcile(&name).await }
        },
        |name, error: &kube::Error| {
            let message = flotilla_runtime::errors::message(error);
            // Right after a join the cluster controller may not have created the execution
            // namespace yet: retried with backoff, not worth a warning.
            if namespace_missing(error) {
                debug!(cluster = %name, error = %message, "execution namespace not there yet; will retry");
            } else {
                warn!(cluster = %name, error = %message, "syncing the impersonation config failed");
            }
        },
    );
    info!("unified auth controller running");
    shutdown.cancelled().await;
    this.queue.shut_down();
    tasks.abort();
}

impl UnifiedAuth {
    /// Queues the clusters whose proxy `role` may grant: those its rules name, every cluster
    /// when a rule names none or grants the search proxy.
    fn requeue_for(&self, role: &ClusterRole) {
        let all = || {
            self.clusters
                .state()
                .iter()
                .map(|c| c.name().to_owned())
                .collect::<Vec<_>>()
        };
        let mut names = BTreeSet::new();
        for rule in role.rules.iter().flatten() {
            if group_matches(rule, CLUSTER_GROUP) && resource_matches(rule, CLUSTER_PROXY) {
                match rule.resource_names.as_deref() {
                    Some(named) if !named.is_empty() => names.extend(named.iter().cloned()),
                    _ => names.extend(all()),
                }
            }
            if group_matches(rule, SEARCH_GROUP) && resource_matches(rule, SEARCH_PROXY) {
                names.extend(all());
            }
        }
        for name in names {
            self.queue.add(name);
        }
    }

    async fn reconcile(&self, name: &str) -> Result<(), kube::Error> {
        let Some(cluster) = self.clusters.get(&ObjectRef::new(name)) else {
            return Ok(());
        };
        if cluster.is_deleting() {
            return Ok(());
        }
        let roles = self.roles.state();
        let bindings = self.bindings.state();
        let subjects = proxy_subjects(
            name,
            roles.iter().map(|r| &**r),
            bindings.iter().map(|b| &**b),
        );
        let rules = impersonation_rules(&subjects);
        let Some(works) = impersonation_works(&cluster, &rules) else {
            return Ok(());
        };
        let mut written = Ok(false);
        for work in works {
            let stored = self.works.get(
                &ObjectRef::new(work.metadata.name.as_deref().unwrap_or_default())
                    .within(work.metadata.namespace.as_deref().unwrap_or_default()),
            );
            match ensure_work(&self.client, work, stored.as_deref()).await {
                Ok(write) => {
                    written = written.map(|any| any || write != WorkWrite::Unchanged);
                }
                Err(error) => {
                    written = Err(error);
                    break;
                }
            }
        }
        // Karmada records the outcome on the Cluster each time it syncs.
        let reference = cluster.object_ref(&());
        match written {
            Ok(changed) => {
                if changed {
                    info!(
                        cluster = name,
                        subjects = subjects.len(),
                        "impersonation config synced"
                    );
                }
                self.recorder
                    .note(
                        &reference,
                        EventType::Normal,
                        "SyncImpersonationConfigSucceed",
                        "SyncImpersonationConfig",
                        "Sync impersonation config succeed.".to_owned(),
                    )
                    .await;
                Ok(())
            }
            Err(error) => {
                self.recorder
                    .note(
                        &reference,
                        EventType::Warning,
                        "SyncImpersonationConfigFailed",
                        "SyncImpersonationConfig",
                        flotilla_runtime::errors::describe(&error),
                    )
                    .await;
                Err(error)
            }
        }
    }
}

/// Whether `error` is the API server's `404` for a namespace (the execution namespace, which the
/// cluster controller creates when the cluster appears).
fn namespace_missing(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status)
        if status.code == 404
            && status.details.as_ref().is_some_and(|d| d.kind == "namespaces"))
}

#[cfg(test)]
mod tests;
