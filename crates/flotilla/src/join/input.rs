//! Checking what the user typed before anything is touched: the cluster name, `--label k=v` and
//! `--taint k=v:Effect`, with messages that name the flag.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;

/// Cluster names become part of the execution namespace `karmada-es-<name>` and of member
/// object names; Karmada's join caps them at 48 characters.
const MAX_CLUSTER_NAME: usize = 48;

/// Why an argument is rejected.
#[derive(Debug, thiserror::Error)]
#[error("{flag}: {message}")]
pub struct InputError {
    pub flag: String,
    pub message: String,
}

fn input(flag: impl Into<String>, message: impl Into<String>) -> InputError {
    InputError {
        flag: flag.into(),
        message: message.into(),
    }
}

/// A cluster name is a DNS-1123 label of at most 48 characters.
pub fn check_cluster_name(name: &str) -> Result<(), InputError> {
    let mut problems = flotilla_api::validation::is_dns1123_label(name);
    if name.len() > MAX_CLUSTER_NAME {
        problems.push(format!(
            "must be no more than {MAX_CLUSTER_NAME} characters"
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(input(format!("cluster name {name:?}"), problems.join("; ")))
    }
}

/// `k=v` pairs into a map; keys are qualified names, values label values.
pub fn parse_labels(pairs: &[String]) -> Result<BTreeMap<String, String>, InputError> {
    let mut labels = BTreeMap::new();
    for pair in pairs {
        let flag = || format!("--label {pair:?}");
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| input(flag(), "expected key=value"))?;
        let mut problems = flotilla_api::validation::is_qualified_name(key);
        problems.extend(flotilla_api::validation::is_valid_label_value(value));
        if !problems.is_empty() {
            return Err(input(flag(), problems.join("; ")));
        }
        labels.insert(key.to_owned(), value.to_owned());
    }
    Ok(labels)
}

/// `key[=value]:Effect` as `kubectl taint` writes it; Effect is NoSchedule, PreferNoSchedule or
/// NoExecute.
pub fn parse_taints(specs: &[String]) -> Result<Vec<Taint>, InputError> {
    let mut taints: Vec<Taint> = Vec::new();
    for spec in specs {
        let flag = || format!("--taint {spec:?}");
        let (key_value, effect) = spec
            .rsplit_once(':')
            .ok_or_else(|| input(flag(), "expected key=value:Effect"))?;
        if !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
            return Err(input(
                flag(),
                format!(
                    "unsupported effect {effect:?}: use NoSchedule, PreferNoSchedule or NoExecute"
                ),
            ));
        }
        let (key, value) = key_value.split_once('=').unwrap_or((key_value, ""));
        let mut problems = flotilla_api::validation::is_qualified_name(key);
        problems.extend(flotilla_api::validation::is_valid_label_value(value));
        if !problems.is_empty() {
            return Err(input(flag(), problems.join("; ")));
        }
        if taints.iter().any(|t| t.key == key && t.effect == effect) {
            return Err(input(flag(), "the same key and effect is given twice"));
        }
        taints.push(Taint {
            key: key.to_owned(),
            value: (!value.is_empty()).then(|| value.to_owned()),
            effect: effect.to_owned(),
            time_added: None,
        });
    }
    Ok(taints)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_names_are_dns_labels_of_at_most_48_characters() {
        assert!(check_cluster_name("cn-shanghai").is_ok());
        let error = check_cluster_name("CN_Shanghai").expect_err("upper case");
        assert!(
            error
                .to_string()
                .starts_with("cluster name \"CN_Shanghai\": ")
        );
        assert!(check_cluster_name(&"a".repeat(48)).is_ok());
        let long = check_cluster_name(&"a".repeat(49)).expect_err("too long");
        assert!(long.to_string().contains("no more than 48"), "{long}");
    }

    #[test]
    fn labels_need_a_key_and_a_valid_value() {
        let labels = parse_labels(&["gpu=a100".into(), "example.com/tier=gold".into()])
            .expect("valid labels");
        assert_eq!(labels["gpu"], "a100");
        assert_eq!(labels["example.com/tier"], "gold");
        let error = parse_labels(&["gpu".into()]).expect_err("no value");
        assert_eq!(error.to_string(), "--label \"gpu\": expected key=value");
        assert!(parse_labels(&["gpu=a b".into()]).is_err());
    }

    #[test]
    fn taints_follow_kubectl_taint_syntax() {
        let taints = parse_taints(&["dedicated=gpu:NoSchedule".into(), "spot:NoExecute".into()])
            .expect("valid taints");
        assert_eq!(taints[0].key, "dedicated");
        assert_eq!(taints[0].value.as_deref(), Some("gpu"));
        assert_eq!(taints[0].effect, "NoSchedule");
        assert_eq!(taints[1].value, None);
        let error = parse_taints(&["a=b:Sometimes".into()]).expect_err("bad effect");
        assert!(
            error
                .to_string()
                .contains("unsupported effect \"Sometimes\"")
        );
        assert!(parse_taints(&["a=b".into()]).is_err());
        assert!(parse_taints(&["a:NoSchedule".into(), "a=x:NoSchedule".into()]).is_err());
    }
}
