//! The (Cluster)PropagationPolicies the detector knows, which one a template gets, and policy
//! deletion (unclaim templates and bindings, then drop the finalizer).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use flotilla_api::karmada::{
    ClusterPropagationPolicy, ClusterResourceBinding, PropagationPolicy, PropagationSpec,
    ResourceBinding,
};
use flotilla_api::validation::karmada::{
    CPP_FINALIZER, CPP_PERMANENT_ID, PP_FINALIZER, PP_PERMANENT_ID,
};
use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tracing::{info, warn};

use super::claim::{PolicyClaim, unclaim_patch};
use super::matching::{Candidate, ImplicitPriority, Subject, best_match, may_preempt};
use super::{Detector, DetectorError, PolicyKey};

/// Policies by key.
#[derive(Debug, Default)]
pub(super) struct PolicyIndex {
    pps: BTreeMap<(String, String), Arc<PropagationPolicy>>,
    cpps: BTreeMap<String, Arc<ClusterPropagationPolicy>>,
}

fn permanent_id<'a>(meta: &'a ObjectMeta, label: &str) -> &'a str {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(label))
        .map_or("", String::as_str)
}

/// A candidate policy: `(is_cluster, namespace, name)`.
type Who<'a> = (bool, &'a str, &'a str);

impl PolicyIndex {
    fn pps_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Arc<PropagationPolicy>> {
        self.pps
            .range((namespace.to_owned(), String::new())..)
            .take_while(move |((ns, _), _)| ns == namespace)
            .map(|(_, p)| p)
    }

    fn spec_of(&self, who: Who<'_>) -> Option<(&ObjectMeta, &PropagationSpec)> {
        if who.0 {
            self.cpps.get(who.2).map(|p| (&p.metadata, &p.spec))
        } else {
            self.pps
                .get(&(who.1.to_owned(), who.2.to_owned()))
                .map(|p| (&p.metadata, &p.spec))
        }
    }

    /// The policy `template` gets: its current claimer while that still exists, has the
    /// claimed id and selects it (unless a `preemption: Always` policy takes it over), else the
    /// best PropagationPolicy of its namespace, else the best ClusterPropagationPolicy.
    /// Returns the claim, the policy spec, whether activation is Lazy, and whether the claim
    /// preempts the template's current (still valid) claimer.
    pub fn decide(
        &self,
        template: &Value,
        current: Option<&PolicyClaim>,
        cluster_scoped: bool,
    ) -> Option<(PolicyClaim, PropagationSpec, bool, bool)> {
        let namespace = template
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        let pp_candidates = self
            .pps_in(namespace)
            .filter(|_| !cluster_scoped)
            .map(|p| Candidate {
                name: p.metadata.name.as_deref().unwrap_or(""),
                explicit: p.spec.priority.unwrap_or(0),
                selectors: &p.spec.resource_selectors,
                deleting: p.metadata.deletion_timestamp.is_some(),
                item: (false, namespace, p.metadata.name.as_deref().unwrap_or("")),
            });
        let subject = Subject::of(template);
        let best_pp = best_match(&subject, pp_candidates).map(|(c, _)| c);
        let cpp_candidates = self.cpps.values().map(|p| Candidate {
            name: p.metadata.name.as_deref().unwrap_or(""),
            explicit: p.spec.priority.unwrap_or(0),
            selectors: &p.spec.resource_selectors,
            deleting: p.metadata.deletion_timestamp.is_some(),
            item: (true, "", p.metadata.name.as_deref().unwrap_or("")),
        });
        let best_cpp = best_match(&subject, cpp_candidates).map(|(c, _)| c);
        let valid_current: Option<Who<'_>> = current.and_then(|claim| {
            let (who, label) = match claim {
                PolicyClaim::Namespaced {
                    namespace, name, ..
                } => ((false, namespace.as_str(), name.as_str()), PP_PERMANENT_ID),
                PolicyClaim::Cluster { name, .. } => ((true, "", name.as_str()), CPP_PERMANENT_ID),
            };
            let (meta, spec) = self.spec_of(who)?;
            (permanent_id(meta, label) == claim.id()
                && meta.deletion_timestamp.is_none()
                && subject.priority_of_any(&spec.resource_selectors) > ImplicitPriority::Mismatch)
                .then_some(who)
        });
        let chosen: Who<'_> = match valid_current {
            Some(current_who) => {
                let (_, current_spec) = self.spec_of(current_who)?;
                let current_priority = current_spec.priority.unwrap_or(0);
                let challengers = [best_pp, best_cpp];
                challengers
                    .into_iter()
                    .flatten()
                    .map(|c| c.item)
                    .filter(|who| *who != current_who)
                    .find(|who| {
                        self.spec_of(*who).is_some_and(|(_, spec)| {
                            may_preempt(
                                who.0,
                                spec.priority.unwrap_or(0),
                                &spec.preemption,
                                current_who.0,
                                current_priority,
                            )
                        })
                    })
                    .unwrap_or(current_who)
            }
            None => best_pp.or(best_cpp)?.item,
        };
        let (meta, spec) = self.spec_of(chosen)?;
        let claim = if chosen.0 {
            PolicyClaim::Cluster {
                name: chosen.2.to_owned(),
                id: permanent_id(meta, CPP_PERMANENT_ID).to_owned(),
            }
        } else {
            PolicyClaim::Namespaced {
                namespace: chosen.1.to_owned(),
                name: chosen.2.to_owned(),
                id: permanent_id(meta, PP_PERMANENT_ID).to_owned(),
            }
        };
        let mut spec = spec.clone();
        spec.apply_defaults();
        let lazy = spec.activation_preference == "Lazy";
        let preempted = valid_current.is_some_and(|current| current != chosen);
        Some((claim, spec, lazy, preempted))
    }
}

impl PolicyIndex {
    /// The `flotilla.io/*` annotations of the policy behind `claim` (Flotilla's scheduling
    /// extensions, e.g. `flotilla.io/replica-division`), which its bindings carry.
    pub fn extension_annotations(&self, claim: &PolicyClaim) -> BTreeMap<String, String> {
        let who: Who<'_> = match claim {
            PolicyClaim::Namespaced {
                namespace, name, ..
            } => (false, namespace, name),
            PolicyClaim::Cluster { name, .. } => (true, "", name),
        };
        self.spec_of(who)
            .and_then(|(meta, _)| meta.annotations.as_ref())
            .map(|a| {
                a.iter()
                    .filter(|(k, _)| k.starts_with(super::build::EXTENSION_PREFIX))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Detector {
    pub(super) async fn watch_propagation_policies(self: Arc<Self>, ready: Arc<Notify>) {
        let api = Api::<PropagationPolicy>::all(self.client.clone());
        let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
        let mut stream = std::pin::pin!(stream);
        let mut relisted = BTreeSet::new();
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Init) => relisted.clear(),
                Ok(Event::InitApply(policy)) => {
                    relisted.insert(key_of(&policy.metadata));
                    self.propagation_policy_seen(policy);
                }
                Ok(Event::InitDone) => {
                    let gone: Vec<_> = self
                        .policies
                        .lock()
                        .pps
                        .keys()
                        .filter(|k| !relisted.contains(*k))
                        .cloned()
                        .collect();
                    for key in gone {
                        self.policies.lock().pps.remove(&key);
                    }
                    ready.notify_one();
                }
                Ok(Event::Apply(policy)) => self.propagation_policy_seen(policy),
                Ok(Event::Delete(policy)) => {
                    let key = key_of(&policy.metadata);
                    self.policies.lock().pps.remove(&key);
                    let (namespace, name) = key;
                    self.check_skipped(
                        PolicyKey::Namespaced { namespace, name },
                        None,
                        &policy.spec,
                    );
                    self.enqueue_claimed(permanent_id(&policy.metadata, PP_PERMANENT_ID));
                }
                Err(error) => warn!(%error, "watching PropagationPolicies"),
            }
        }
    }

    fn propagation_policy_seen(&self, policy: PropagationPolicy) {
        let key = key_of(&policy.metadata);
        let policy = Arc::new(policy);
        self.policies.lock().pps.insert(key.clone(), policy.clone());
        if policy.metadata.deletion_timestamp.is_some() {
            self.policy_queue.add(PolicyKey::Namespaced {
                namespace: key.0,
                name: key.1,
            });
            return;
        }
        self.check_skipped(
            PolicyKey::Namespaced {
                namespace: key.0.clone(),
                name: key.1.clone(),
            },
            Some(&policy.metadata),
            &policy.spec,
        );
        self.enqueue_selected(
            Some(&key.0),
            &policy.spec,
            permanent_id(&policy.metadata, PP_PERMANENT_ID),
        );
    }

    pub(super) async fn watch_cluster_propagation_policies(self: Arc<Self>, ready: Arc<Notify>) {
        let api = Api::<ClusterPropagationPolicy>::all(self.client.clone());
        let stream = watcher::watcher(api, watcher::Config::default()).default_backoff();
        let mut stream = std::pin::pin!(stream);
        let mut relisted = BTreeSet::new();
        while let Some(event) = stream.next().await {
            match event {
                Ok(Event::Init) => relisted.clear(),
                Ok(Event::InitApply(policy)) => {
                    relisted.insert(key_of(&policy.metadata).1);
                    self.cluster_propagation_policy_seen(policy);
                }
                Ok(Event::InitDone) => {
                    self.policies
                        .lock()
                        .cpps
                        .retain(|name, _| relisted.contains(name));
                    ready.notify_one();
                }
                Ok(Event::Apply(policy)) => self.cluster_propagation_policy_seen(policy),
                Ok(Event::Delete(policy)) => {
                    let name = key_of(&policy.metadata).1;
                    self.policies.lock().cpps.remove(&name);
                    self.check_skipped(PolicyKey::Cluster { name }, None, &policy.spec);
                    self.enqueue_claimed(permanent_id(&policy.metadata, CPP_PERMANENT_ID));
                }
                Err(error) => warn!(%error, "watching ClusterPropagationPolicies"),
            }
        }
    }

    fn cluster_propagation_policy_seen(&self, policy: ClusterPropagationPolicy) {
        let name = key_of(&policy.metadata).1;
        let policy = Arc::new(policy);
        self.policies
            .lock()
            .cpps
            .insert(name.clone(), policy.clone());
        if policy.metadata.deletion_timestamp.is_some() {
            self.policy_queue.add(PolicyKey::Cluster { name });
            return;
        }
        self.check_skipped(
            PolicyKey::Cluster { name },
            Some(&policy.metadata),
            &policy.spec,
        );
        self.enqueue_selected(
            None,
            &policy.spec,
            permanent_id(&policy.metadata, CPP_PERMANENT_ID),
        );
    }

    /// The policy-deletion worker.
    pub(super) fn work_policies(self: &Arc<Self>, tasks: &mut flotilla_runtime::Tasks) {
        let me = self.clone();
        tasks.workers(
            &self.policy_queue,
            1,
            move |key| {
                let me = me.clone();
                async move { me.handle_policy_deletion(&key).await }
            },
            |key, error| warn!(policy = ?key, %error, "cleaning up after a deleted policy failed"),
        );
    }

    /// Unclaims every template (and its binding) the deleting policy claims, then removes the
    /// policy's finalizer.
    async fn handle_policy_deletion(&self, key: &PolicyKey) -> Result<(), DetectorError> {
        let (meta, claim, finalizer) = {
            let policies = self.policies.lock();
            match key {
                PolicyKey::Namespaced { namespace, name } => {
                    let Some(p) = policies.pps.get(&(namespace.clone(), name.clone())) else {
                        return Ok(());
                    };
                    let claim = PolicyClaim::Namespaced {
                        namespace: namespace.clone(),
                        name: name.clone(),
                        id: permanent_id(&p.metadata, PP_PERMANENT_ID).to_owned(),
                    };
                    (p.metadata.clone(), claim, PP_FINALIZER)
                }
                PolicyKey::Cluster { name } => {
                    let Some(p) = policies.cpps.get(name) else {
                        return Ok(());
                    };
                    let claim = PolicyClaim::Cluster {
                        name: name.clone(),
                        id: permanent_id(&p.metadata, CPP_PERMANENT_ID).to_owned(),
                    };
                    (p.metadata.clone(), claim, CPP_FINALIZER)
                }
            }
        };
        if meta.deletion_timestamp.is_none()
            || !meta.finalizers.iter().flatten().any(|f| f == finalizer)
        {
            return Ok(());
        }
        let claimed = self.claims.lock().claimed_by(claim.id());
        let patch = unclaim_patch(&claim);
        for template in &claimed {
            let Some(object) = self.template(template) else {
                continue;
            };
            let value = serde_json::to_value(&*object)?;
            if claim.held_by(&value) {
                // A template deleted meanwhile (e.g. with its namespace) has nothing to unclaim.
                match self.patch_template(template, &patch).await {
                    Err(DetectorError::Kube(kube::Error::Api(status))) if status.code == 404 => {}
                    other => {
                        other?;
                    }
                }
            }
            self.unclaim_binding(template, &claim, &patch).await?;
        }
        info!(policy = ?key, templates = claimed.len(), "policy deleted; templates unclaimed");
        let finalizers: Vec<String> = meta
            .finalizers
            .iter()
            .flatten()
            .filter(|f| *f != finalizer)
            .cloned()
            .collect();
        let remove = json!({"metadata": {"finalizers": finalizers,
            "resourceVersion": meta.resource_version}});
        let params = PatchParams::default();
        match key {
            PolicyKey::Namespaced { namespace, name } => {
                Api::<PropagationPolicy>::namespaced(self.client.clone(), namespace)
                    .patch(name, &params, &Patch::Merge(&remove))
                    .await?;
            }
            PolicyKey::Cluster { name } => {
                Api::<ClusterPropagationPolicy>::all(self.client.clone())
                    .patch(name, &params, &Patch::Merge(&remove))
                    .await?;
            }
        }
        Ok(())
    }

    pub(super) async fn unclaim_binding(
        &self,
        template: &super::TemplateKey,
        claim: &PolicyClaim,
        patch: &Value,
    ) -> Result<(), DetectorError> {
        let name = flotilla_api::karmada::names::binding_name(&template.kind, &template.name);
        let label = if claim.is_cluster() {
            CPP_PERMANENT_ID
        } else {
            PP_PERMANENT_ID
        };
        let params = PatchParams::default();
        if template.namespace.is_empty() {
            let api = Api::<ClusterResourceBinding>::all(self.client.clone());
            if let Some(binding) = api.get_opt(&name).await?
                && permanent_id(&binding.metadata, label) == claim.id()
            {
                ignore_not_found(api.patch(&name, &params, &Patch::Merge(patch)).await)?;
            }
        } else {
            let api = Api::<ResourceBinding>::namespaced(self.client.clone(), &template.namespace);
            if let Some(binding) = api.get_opt(&name).await?
                && permanent_id(&binding.metadata, label) == claim.id()
            {
                ignore_not_found(api.patch(&name, &params, &Patch::Merge(patch)).await)?;
            }
        }
        Ok(())
    }
}

/// A write to an object that went meanwhile is no failure.
fn ignore_not_found<T>(result: Result<T, kube::Error>) -> Result<(), kube::Error> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

fn key_of(meta: &ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests;
