//! `apiregistration.k8s.io/v1` APIServices, as kube-apiserver's aggregator keeps them
//! (`kube-aggregator`'s `autoregister`, `crdregistration` and `APIServiceAvailability`
//! controllers, Kubernetes v1.32, behaviour only).
//!
//! Every group version the server serves itself has a *Local* APIService `<version>.<group>`
//! (`v1.` for the core group): no `service`, kube's `groupPriorityMinimum`/`versionPriority`
//! for the built-in groups (1000/100 for the others, as for a CRD's), label
//! `kube-aggregator.kubernetes.io/automanaged` (`onstart` for the built-ins, `true` for custom
//! resources' and the other in-process groups), status `Available=True` reason `Local`. They
//! are created at start and follow CRDs (checked every 10 s): an automanaged APIService whose
//! group version is no longer served is deleted, one deleted by hand comes back.
//!
//! An APIService naming a `service` (metrics-server's `v1beta1.metrics.k8s.io`, a
//! prometheus-adapter's) is stored as given and its `Available` condition follows kube's checks
//! of the Service: `ServiceNotFound` (`service/x in "ns" is not present`), `MissingEndpoints`
//! (`endpoints for service/x in "ns" have no addresses with port name "…"`), else `True` /
//! `Passed`. Requests are **not** proxied to it: a group version the server serves itself (the
//! members' `metrics.k8s.io`) keeps being served in process, any other answers 404.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::catalog::ResourceInfo;
use crate::error::ApiError;
use crate::registry::write::Part;
use crate::registry::{DeleteOptions, Registry, WriteOptions};

const AUTOMANAGED: &str = "kube-aggregator.kubernetes.io/automanaged";
const INTERVAL: Duration = Duration::from_secs(10);
const MANAGER: &str = "kube-apiserver";
const PREFIX: &str = "/registry/apiregistration.k8s.io/apiservices/";

/// kube-apiserver's `apiVersionPriorities` for the group versions Flotilla serves.
const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2", 17500, 30),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
    ("apiregistration.k8s.io", "v1", 18000, 1),
];

/// The APIService's name for a group version.
pub fn name_of(group: &str, version: &str) -> String {
    format!("{version}.{group}")
}

/// The Local APIService of a group version the server serves.
pub fn local(group: &str, version: &str) -> Value {
    let known = PRIORITIES
        .iter()
        .find(|(g, v, _, _)| *g == group && *v == version);
    let (group_priority, version_priority) = known.map_or((1000, 100), |(_, _, g, v)| (*g, *v));
    json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {
            "name": name_of(group, version),
            "labels": {AUTOMANAGED: if known.is_some() { "onstart" } else { "true" }},
        },
        "spec": {
            "group": group,
            "version": version,
            "groupPriorityMinimum": group_priority,
            "versionPriority": version_priority,
        },
    })
}

/// The `Available` condition an APIService should have: Local, or kube's checks of its Service
/// against the Services and Endpoints in `lookup` (by `namespace/name`).
pub fn availability(api_service: &Value, lookup: impl Fn(&str, &str) -> Option<Value>) -> Value {
    let service = &api_service["spec"]["service"];
    let condition = |status: &str, reason: &str, message: String| json!({"type": "Available", "status": status, "reason": reason, "message": message});
    let Some(name) = service["name"].as_str() else {
        return condition(
            "True",
            "Local",
            "Local APIServices are always available".into(),
        );
    };
    let namespace = service["namespace"].as_str().unwrap_or("");
    let Some(target) = lookup("services", &format!("{namespace}/{name}")) else {
        return condition(
            "False",
            "ServiceNotFound",
            format!("service/{name} in \"{namespace}\" is not present"),
        );
    };
    if target["spec"]["type"] == "ExternalName" {
        return condition("True", "Passed", "all checks passed".into());
    }
    let port = service["port"].as_i64().unwrap_or(443);
    let port_name = target["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["port"].as_i64() == Some(port))
        .map(|p| p["name"].as_str().unwrap_or("").to_owned());
    let Some(port_name) = port_name else {
        return condition(
            "False",
            "ServicePortError",
            format!("service/{name} in \"{namespace}\" is not listening on port {port}"),
        );
    };
    let endpoints = lookup("endpoints", &format!("{namespace}/{name}"));
    let ready = endpoints.as_ref().is_some_and(|e| {
        e["subsets"].as_array().into_iter().flatten().any(|subset| {
            let named = subset["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["name"].as_str().unwrap_or("") == port_name);
            named
                && subset["addresses"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty())
        })
    });
    if !ready {
        return condition(
            "False",
            "MissingEndpoints",
            format!(
                "endpoints for service/{name} in \"{namespace}\" have no addresses with port name \"{port_name}\""
            ),
        );
    }
    condition("True", "Passed", "all checks passed".into())
}

/// kube-aggregator's `ValidateAPIService` (the parts users meet): the name is
/// `<spec.version>.<spec.group>`, the version a DNS label, the group a DNS subdomain (or empty,
/// the core group), the priorities positive; a `service` names its namespace and name and a
/// port of 1–65535.
pub fn errors(object: &Value) -> Vec<flotilla_api::validation::FieldError> {
    use flotilla_api::validation::{FieldError, is_dns1123_label, is_dns1123_subdomain};
    let mut errors = Vec::new();
    let spec = &object["spec"];
    let group = spec["group"].as_str().unwrap_or("");
    let version = spec["version"].as_str().unwrap_or("");
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    let required = name_of(group, version);
    if name != required {
        errors.push(FieldError::invalid(
            "metadata.name",
            name,
            format!("must be `spec.version+\".\"+spec.group`: {required:?}"),
        ));
    }
    if version.is_empty() {
        errors.push(FieldError::required("spec.version", ""));
    } else {
        for message in is_dns1123_label(version) {
            errors.push(FieldError::invalid("spec.version", version, message));
        }
    }
    if !group.is_empty() {
        for message in is_dns1123_subdomain(group) {
            errors.push(FieldError::invalid("spec.group", group, message));
        }
    }
    for field in ["groupPriorityMinimum", "versionPriority"] {
        let value = spec[field].as_i64().unwrap_or(0);
        if value <= 0 {
            errors.push(FieldError::invalid(
                format!("spec.{field}"),
                value,
                "must be positive and less than 1000000",
            ));
        }
    }
    let service = &spec["service"];
    if service.is_object() {
        for field in ["namespace", "name"] {
            if service[field].as_str().is_none_or(str::is_empty) {
                errors.push(FieldError::required(format!("spec.service.{field}"), ""));
            }
        }
        if let Some(port) = service["port"].as_i64()
            && !(1..=65535).contains(&port)
        {
            errors.push(FieldError::invalid(
                "spec.service.port",
                port,
                "must be a valid port number (1-65535)",
            ));
        }
    }
    errors
}

/// The changes that can change an APIService's wanted state: APIServices, CRDs (their group
/// versions), Services and Endpoints (availability).
const WATCHED: [&str; 4] = [
    PREFIX,
    "/registry/apiextensions.k8s.io/customresourcedefinitions/",
    "/registry/core/services/",
    "/registry/core/endpoints/",
];

/// Runs until dropped: `extra` are group versions served in process beside the catalog's.
/// Syncs at start, shortly after a change that matters, and every 10 s.
pub async fn run(registry: Registry, extra: Vec<(String, String)>) {
    let Some(info) = registry
        .catalog()
        .get("apiregistration.k8s.io", "v1", "apiservices")
    else {
        return;
    };
    let mut live = registry
        .cache()
        .subscribe(PREFIX.as_bytes(), None)
        .ok()
        .map(|s| s.live);
    loop {
        if let Err(e) = sync(&registry, &info, &extra).await
            && e.code != 409
            && e.code != 404
        {
            tracing::warn!(error = %e.message, "cannot sync APIServices");
        }
        // One timer for the whole wait: the feed carries every change in the store.
        let deadline = tokio::time::sleep(INTERVAL);
        tokio::pin!(deadline);
        loop {
            let Some(feed) = live.as_mut() else {
                deadline.as_mut().await;
                break;
            };
            tokio::select! {
                received = feed.recv() => match received {
                    Ok(change) if WATCHED.iter().any(|p| change.object.key.starts_with(p.as_bytes())) => {
                        // Let the CRD reach the catalog, and a burst settle.
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        break;
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => break,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => live = None,
                },
                () = deadline.as_mut() => break,
            }
        }
    }
}

/// Every group version served: the catalog's and `extra`.
fn served(registry: &Registry, extra: &[(String, String)]) -> BTreeMap<String, (String, String)> {
    registry
        .catalog()
        .groups()
        .into_iter()
        .flat_map(|(group, versions)| versions.into_iter().map(move |v| (group.clone(), v)))
        .chain(extra.iter().cloned())
        .map(|(group, version)| (name_of(&group, &version), (group, version)))
        .collect()
}

async fn sync(
    registry: &Registry,
    info: &Arc<ResourceInfo>,
    extra: &[(String, String)],
) -> Result<(), ApiError> {
    let options = WriteOptions {
        field_manager: Some(MANAGER.to_owned()),
        ..WriteOptions::default()
    };
    let wanted = served(registry, extra);
    let (stored, _) = registry.cache().list(PREFIX.as_bytes(), None);
    let stored: BTreeMap<String, (Value, flotilla_store::Revision)> = stored
        .iter()
        .map(|o| {
            let value = o.value();
            (
                crate::object::name(&value).unwrap_or("").to_owned(),
                (value, o.revision),
            )
        })
        .collect();
    for (name, (value, _)) in &stored {
        let automanaged = value["metadata"]["labels"][AUTOMANAGED].is_string();
        if automanaged && !wanted.contains_key(name) {
            match registry
                .delete(info, None, name, &DeleteOptions::default())
                .await
            {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
    }
    for (name, (group, version)) in &wanted {
        if !stored.contains_key(name) {
            match registry
                .create(info, None, local(group, version), &options)
                .await
            {
                Ok(_) => {}
                Err(e) if e.reason == "AlreadyExists" => {}
                Err(e) => return Err(e),
            }
        }
    }
    // Conditions, from the current objects.
    let (current, _) = registry.cache().list(PREFIX.as_bytes(), None);
    let lookup = |resource: &str, key: &str| {
        registry
            .cache()
            .get(format!("/registry/core/{resource}/{key}").as_bytes())
            .map(|o| o.value())
    };
    for object in current {
        let mut value = object.value();
        let condition = availability(&value, lookup);
        let existing = value["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Available"))
            .cloned();
        let same = existing.as_ref().is_some_and(|e| {
            ["status", "reason", "message"]
                .iter()
                .all(|f| e[*f] == condition[*f])
        });
        if same {
            continue;
        }
        let mut condition = condition;
        condition["lastTransitionTime"] = json!(crate::registry::format_time(registry.clock.now()));
        value["status"] = json!({"conditions": [condition]});
        crate::object::set_resource_version(&mut value, object.revision);
        let name = crate::object::name(&value).unwrap_or("").to_owned();
        registry
            .update(info, None, &name, value, Part::Status, &options)
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_api_services_carry_kubes_priorities() {
        let core = local("", "v1");
        assert_eq!(core["metadata"]["name"], "v1.");
        assert_eq!(core["spec"]["groupPriorityMinimum"], 18000);
        assert_eq!(core["metadata"]["labels"][AUTOMANAGED], "onstart");
        let apps = local("apps", "v1");
        assert_eq!(apps["metadata"]["name"], "v1.apps");
        assert_eq!(apps["spec"]["versionPriority"], 15);
        let karmada = local("policy.karmada.io", "v1alpha1");
        assert_eq!(karmada["metadata"]["name"], "v1alpha1.policy.karmada.io");
        assert_eq!(
            (
                &karmada["spec"]["groupPriorityMinimum"],
                &karmada["spec"]["versionPriority"]
            ),
            (&json!(1000), &json!(100))
        );
        assert_eq!(karmada["metadata"]["labels"][AUTOMANAGED], "true");
        assert_eq!(
            availability(&apps, |_, _| None)["reason"],
            "Local",
            "no service: local"
        );
    }

    #[test]
    fn names_follow_the_group_version_and_priorities_are_positive() {
        assert!(errors(&local("", "v1")).is_empty());
        assert!(errors(&local("policy.karmada.io", "v1alpha1")).is_empty());
        let wrong = json!({"metadata": {"name": "metrics"}, "spec": {"group": "metrics.k8s.io",
            "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 0,
            "service": {"namespace": "kube-system", "port": 70000}}});
        let messages: Vec<String> = errors(&wrong).iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            [
                "metadata.name: Invalid value: \"metrics\": must be `spec.version+\".\"+spec.group`: \"v1beta1.metrics.k8s.io\"",
                "spec.versionPriority: Invalid value: 0: must be positive and less than 1000000",
                "spec.service.name: Required value",
                "spec.service.port: Invalid value: 70000: must be a valid port number (1-65535)",
            ]
        );
    }

    #[test]
    fn a_service_backed_api_service_is_available_once_its_service_has_endpoints() {
        let metrics = json!({"spec": {"group": "metrics.k8s.io", "version": "v1beta1",
            "service": {"namespace": "kube-system", "name": "metrics-server", "port": 443}}});
        let none = availability(&metrics, |_, _| None);
        assert_eq!(
            (&none["status"], &none["reason"], &none["message"]),
            (
                &json!("False"),
                &json!("ServiceNotFound"),
                &json!("service/metrics-server in \"kube-system\" is not present")
            )
        );
        let service = json!({"spec": {"ports": [{"name": "https", "port": 443}]}});
        let empty = availability(&metrics, |resource, _| {
            (resource == "services").then(|| service.clone())
        });
        assert_eq!(empty["reason"], "MissingEndpoints");
        assert_eq!(
            empty["message"],
            "endpoints for service/metrics-server in \"kube-system\" have no addresses with port name \"https\""
        );
        let endpoints = json!({"subsets": [{"addresses": [{"ip": "10.0.0.5"}],
            "ports": [{"name": "https", "port": 10250}]}]});
        let up = availability(&metrics, |resource, _| {
            Some(if resource == "services" {
                service.clone()
            } else {
                endpoints.clone()
            })
        });
        assert_eq!(
            (&up["status"], &up["reason"]),
            (&json!("True"), &json!("Passed"))
        );
    }
}
