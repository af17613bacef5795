//! RBAC escalation prevention: does the requester already hold every permission a role grants?
//!
//! Follows Kubernetes v1.32 `pkg/registry/rbac/validation/policy_comparator.go` (`Covers`,
//! `BreakdownRule`, `ruleCovers`: a servant rule is split into one-verb, one-resource,
//! one-name pieces, each of which one owner rule must cover), `policy_compact.go`
//! (`CompactRules`: pieces of one group/resource/name that differ only by verb are joined back)
//! and `pkg/apis/rbac/v1/helpers.go` (`CompactString`, the wording of a missing rule in the 403),
//! with the message of `ConfirmNoEscalation` in `pkg/registry/rbac/validation/rule.go`.
//! Written anew from reading those files.

use super::forbidden::go_quote;
use super::rbac::PolicyRule;

const ALL: &str = "*";

/// The rules that grant everything: what using an `aggregationRule` requires
/// (`fullAuthority` in `pkg/registry/rbac/clusterrole/policybased/storage.go`).
pub(crate) fn full_authority() -> Vec<PolicyRule> {
    vec![
        PolicyRule {
            verbs: vec![ALL.into()],
            api_groups: vec![ALL.into()],
            resources: vec![ALL.into()],
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: vec![ALL.into()],
            non_resource_urls: vec![ALL.into()],
            ..PolicyRule::default()
        },
    ]
}

/// The pieces of `servant` that no rule of `owner` covers (empty when `owner` covers it all).
pub(crate) fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|piece| !owner.iter().any(|rule| covers(rule, piece)))
        .collect()
}

/// One rule per (group, resource, verb[, name]) and per (URL, verb).
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut pieces = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let piece = |names: Vec<String>| PolicyRule {
                    verbs: vec![verb.clone()],
                    api_groups: vec![group.clone()],
                    resources: vec![resource.clone()],
                    resource_names: names,
                    non_resource_urls: Vec::new(),
                };
                if rule.resource_names.is_empty() {
                    pieces.push(piece(Vec::new()));
                } else {
                    pieces.extend(rule.resource_names.iter().map(|n| piece(vec![n.clone()])));
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            pieces.push(PolicyRule {
                verbs: vec![verb.clone()],
                non_resource_urls: vec![url.clone()],
                ..PolicyRule::default()
            });
        }
    }
    pieces
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|item| has(set, item))
}

/// `*`, every resource named, or a `*/<subresource>` rule for each subresource asked.
fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, ALL) || has_all(owner, wanted) {
        return true;
    }
    wanted.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

fn urls_cover(owner: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|path| {
        owner.iter().any(|own| {
            own == path
                || own
                    .strip_suffix('*')
                    .is_some_and(|_| path.starts_with(own.trim_end_matches('*')))
        })
    })
}

/// Whether `owner` covers `piece` (a rule of at most one verb, resource and name).
fn covers(owner: &PolicyRule, piece: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &piece.verbs);
    let groups = has(&owner.api_groups, ALL) || has_all(&owner.api_groups, &piece.api_groups);
    let names = owner.resource_names.is_empty()
        || (!piece.resource_names.is_empty()
            && has_all(&owner.resource_names, &piece.resource_names));
    verbs
        && groups
        && resources_cover(&owner.resources, &piece.resources)
        && names
        && urls_cover(&owner.non_resource_urls, &piece.non_resource_urls)
}

/// Joins pieces of one group, one resource and at most one name that differ only by verb,
/// keeping first-seen order (the order of the compacted list does not matter: the message
/// sorts it).
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            out.push(rule);
            continue;
        }
        match simple.iter_mut().find(|s| {
            s.api_groups == rule.api_groups
                && s.resources == rule.resources
                && s.resource_names == rule.resource_names
        }) {
            Some(existing) => existing.verbs.extend(rule.verbs),
            None => simple.push(rule),
        }
    }
    out.extend(simple);
    out
}

/// Go's `%q` of a string slice: `["a" "b"]`.
pub(crate) fn go_quote_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    format!("[{}]", quoted.join(" "))
}

/// `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`.
fn compact_string(rule: &PolicyRule) -> String {
    let parts: Vec<String> = [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ]
    .into_iter()
    .filter(|(_, list)| !list.is_empty())
    .map(|(name, list)| format!("{name}:{}", go_quote_list(list)))
    .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The reason an escalation is refused: who, and each missing permission on its own line,
/// sorted, then the errors met resolving the user's own rules.
pub(crate) fn escalation_message(
    user: &str,
    groups: &[String],
    missing: Vec<PolicyRule>,
    resolution_errors: &[String],
) -> String {
    let mut lines: Vec<String> = compact(missing).iter().map(compact_string).collect();
    lines.sort();
    lines.dedup();
    let mut message = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        go_quote(user),
        go_quote_list(groups),
        lines.join("\n")
    );
    if !resolution_errors.is_empty() {
        let joined = if resolution_errors.len() == 1 {
            resolution_errors[0].clone()
        } else {
            format!("[{}]", resolution_errors.join(", "))
        };
        message.push_str(&format!("; resolution errors: [{joined}]"));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str], names: &[&str]) -> PolicyRule {
        let own = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        PolicyRule {
            verbs: own(verbs),
            api_groups: own(groups),
            resources: own(resources),
            resource_names: own(names),
            non_resource_urls: Vec::new(),
        }
    }

    #[test]
    fn an_owner_covers_what_its_rules_cover_piece_by_piece() {
        let owner = vec![
            rule(&["get", "list"], &[""], &["pods", "pods/log"], &[]),
            rule(&["*"], &["apps"], &["deployments"], &["web"]),
            rule(&["get"], &[""], &["*/status"], &[]),
        ];
        let granted = [
            rule(&["list", "get"], &[""], &["pods"], &[]),
            rule(&["get"], &[""], &["pods"], &["one"]),
            rule(&["delete", "update"], &["apps"], &["deployments"], &["web"]),
            rule(&["get"], &[""], &["services/status"], &[]),
        ];
        assert!(uncovered(&owner, &granted).is_empty());
        // A rule with names does not cover the same rule without names (every object).
        let all_deployments = [rule(&["get"], &["apps"], &["deployments"], &[])];
        assert_eq!(uncovered(&owner, &all_deployments).len(), 1);
        let more = [rule(
            &["get", "watch", "delete"],
            &["", "apps"],
            &["pods"],
            &[],
        )];
        let missing = uncovered(&owner, &more);
        assert_eq!(missing.len(), 5, "{missing:?}");
    }

    #[test]
    fn the_message_joins_verbs_of_one_resource_and_sorts_lines() {
        let owner = vec![rule(&["get"], &[""], &["pods"], &[])];
        let granted = [
            rule(&["get", "list", "watch"], &[""], &["secrets", "pods"], &[]),
            PolicyRule {
                verbs: vec!["get".into()],
                non_resource_urls: vec!["/metrics".into()],
                ..PolicyRule::default()
            },
        ];
        let message = escalation_message(
            "jane",
            &["devs".into(), "system:authenticated".into()],
            uncovered(&owner, &granted),
            &[],
        );
        assert_eq!(
            message,
            "user \"jane\" (groups=[\"devs\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
             {APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"list\" \"watch\"]}\n\
             {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\" \"watch\"]}\n\
             {NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}"
        );
    }

    #[test]
    fn full_authority_is_covered_only_by_full_authority() {
        let admin = full_authority();
        assert!(uncovered(&admin, &full_authority()).is_empty());
        let almost = vec![rule(&["*"], &["*"], &["*"], &[])];
        assert_eq!(uncovered(&almost, &full_authority()).len(), 1);
    }
}
