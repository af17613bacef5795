//! Karmada's `spread_constraint_test.go` cases for the filter.

use flotilla_api::karmada::{Placement, ResourceBindingStatus};
use serde_json::json;

use super::*;
use crate::framework::{Code, Prepared};
use crate::plugins::testing::{cluster, spec};

#[test]
fn filter_needs_the_spread_property_karmada_table() {
    // (description, spread fields, cluster spec, expected reason; None = success)
    let table = [
        ("no spread constraints", vec![], json!({}), None),
        (
            "provider present",
            vec!["provider"],
            json!({"provider": "aws"}),
            None,
        ),
        (
            "provider missing",
            vec!["provider"],
            json!({}),
            Some("cluster(s) did not have provider property"),
        ),
        (
            "region present",
            vec!["region"],
            json!({"region": "us-west-2"}),
            None,
        ),
        (
            "region missing",
            vec!["region"],
            json!({}),
            Some("cluster(s) did not have region property"),
        ),
        (
            "zones present",
            vec!["zone"],
            json!({"zones": ["us-west-2a"]}),
            None,
        ),
        (
            "zones missing",
            vec!["zone"],
            json!({}),
            Some("cluster(s) did not have zones property"),
        ),
    ];
    let s = spec(json!({}));
    for (description, fields, cluster_spec, want) in table {
        let constraints: Vec<_> = fields
            .iter()
            .map(|f| json!({ "spreadByField": f }))
            .collect();
        let placement: Placement =
            serde_json::from_value(json!({ "spreadConstraints": constraints })).expect("placement");
        let c = cluster("m", cluster_spec, json!({}));
        let ctx = PluginContext {
            spec: &s,
            status: &ResourceBindingStatus::default(),
            placement: &placement,
            cluster: &c,
            prepared: &Prepared::default(),
        };
        let result = SpreadConstraint.filter(&ctx);
        let code = if want.is_some() {
            Code::Unschedulable
        } else {
            Code::Success
        };
        assert_eq!(result.code, code, "{description}");
        assert_eq!(
            result.reasons.first().map(String::as_str),
            want,
            "{description}"
        );
    }
}

#[test]
fn plugin_name() {
    assert_eq!(SpreadConstraint.name(), "SpreadConstraint");
}
