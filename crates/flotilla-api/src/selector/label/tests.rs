use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use proptest::prelude::*;

use super::*;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn sel(s: &str) -> LabelSelector {
    LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn err(s: &str) -> String {
    match LabelSelector::parse(s) {
        Ok(parsed) => panic!("{s:?} should fail, parsed as {parsed}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn upstream_good_strings_print_back_without_spaces() {
    for s in [
        "x=a,y=b,z=c",
        "",
        "x!=a,y=b",
        "x=",
        "x= ",
        "x=,z= ",
        "x= ,z= ",
        "!x",
        "x>1",
        "x>1,z<5",
    ] {
        assert_eq!(sel(s).to_string(), s.replace(' ', ""), "{s:?}");
    }
}

#[test]
fn upstream_bad_strings_fail() {
    for s in ["x=a||y=b", "x==a==b", "!x=a", "x<a"] {
        err(s);
    }
}

#[test]
fn every_operator_parses_to_its_requirement() {
    let cases = [
        ("k=v", Operator::Equals, vec!["v"]),
        ("k==v", Operator::DoubleEquals, vec!["v"]),
        ("k!=v", Operator::NotEquals, vec!["v"]),
        ("k in (b,a)", Operator::In, vec!["a", "b"]),
        ("k notin (a)", Operator::NotIn, vec!["a"]),
        ("k", Operator::Exists, vec![]),
        ("!k", Operator::DoesNotExist, vec![]),
        ("k>5", Operator::GreaterThan, vec!["5"]),
        ("k<5", Operator::LessThan, vec!["5"]),
        ("k in ()", Operator::In, vec![""]),
        ("k in (,a)", Operator::In, vec!["", "a"]),
        ("k in (a,,b)", Operator::In, vec!["", "a", "b"]),
        ("example.com/k=v", Operator::Equals, vec!["v"]),
    ];
    for (input, operator, values) in cases {
        let parsed = sel(input);
        let values: BTreeSet<String> = values.into_iter().map(str::to_owned).collect();
        assert_eq!(parsed.requirements.len(), 1, "{input}");
        assert_eq!(parsed.requirements[0].operator, operator, "{input}");
        assert_eq!(parsed.requirements[0].values, values, "{input}");
    }
}

#[test]
fn whitespace_separates_tokens_and_is_not_printed() {
    assert_eq!(
        sel("  a  in ( x , y ) ,\t!b ,c\n").to_string(),
        "a in (x,y),!b,c"
    );
    assert_eq!(
        sel("in in (in),notin notin (notin)").to_string(),
        "in in (in),notin notin (notin)"
    );
}

#[test]
fn requirements_sort_by_key_and_keep_order_within_a_key() {
    assert_eq!(sel("x=a,a=x").to_string(), sel("a=x,x=a").to_string());
    assert_eq!(sel("b=2,a!=1,b!=3").to_string(), "a!=1,b=2,b!=3");
}

#[test]
fn syntax_errors_name_the_token_and_position() {
    assert_eq!(err("x=a,"), "found '', expected: identifier after ','");
    assert_eq!(err("x=a)"), "found ')', expected: ',' or 'end of string'");
    assert_eq!(
        err(")"),
        "found ')', expected: !, identifier, or 'end of string'"
    );
    assert_eq!(
        err("x in a"),
        "unable to parse requirement: found 'a' expected: '('"
    );
    assert_eq!(
        err("x in (a"),
        "unable to parse requirement: found '', expected: ',' or ')'"
    );
    assert_eq!(
        err("x in (="),
        "unable to parse requirement: found '=', expected: ',', ')' or identifier"
    );
    assert_eq!(
        err("x y"),
        "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"
    );
    assert_eq!(
        err("x=("),
        "unable to parse requirement: found '(', expected: identifier"
    );
    assert_eq!(
        err("!!x"),
        "unable to parse requirement: found '!', expected: identifier"
    );
    match LabelSelector::parse("a=b, c d") {
        Err(SelectorError::Syntax {
            found, position, ..
        }) => assert_eq!((found.as_str(), position), ("d", 7)),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn invalid_keys_and_values_are_rejected_with_field_errors() {
    assert_eq!(
        err("a/b/c"),
        "unable to parse requirement: key: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    );
    let long = "v".repeat(64);
    assert_eq!(
        err(&format!("k={long}")),
        format!(
            "unable to parse requirement: values[0][k]: Invalid value: \"{long}\": must be no more than 63 characters"
        )
    );
    assert!(err("k=-v").starts_with(
        "unable to parse requirement: values[0][k]: Invalid value: \"-v\": a valid label must be"
    ));
    assert!(err("k>a").contains("for 'Gt', 'Lt' operators, the value must be an integer"));
    assert!(err("k>99999999999999999999").contains("the value must be an integer"));
    match LabelSelector::parse("ok=1,bad_=x") {
        Err(SelectorError::InvalidRequirement { position, .. }) => assert_eq!(position, 5),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn nul_ends_the_input_like_upstream() {
    assert_eq!(err("a=b,\0c=d"), "found '', expected: identifier after ','");
}

#[test]
fn matching_follows_each_operator() {
    let l = labels(&[("app", "web"), ("tier", "fe"), ("n", "7"), ("bad", "x")]);
    let yes = [
        "app=web",
        "app==web",
        "app!=db",
        "none!=x",
        "tier in (fe,be)",
        "tier notin (be)",
        "none notin (a)",
        "app",
        "!none",
        "n>6",
        "n<8",
        "",
        "app=web,n>1",
    ];
    let no = [
        "app=db",
        "none=",
        "app!=web",
        "tier in (be)",
        "tier notin (fe)",
        "none in (a)",
        "none",
        "!app",
        "n>7",
        "n<7",
        "none>1",
        "bad>1",
        "app=web,n>7",
    ];
    for s in yes {
        assert!(sel(s).matches(&l), "{s} should match");
    }
    for s in no {
        assert!(!sel(s).matches(&l), "{s} should not match");
    }
    assert!(sel("none=").matches(&labels(&[("none", "")])));
}

#[test]
fn requires_exact_match_reports_pinned_values() {
    let s = sel("a=1,b in (2),c in (3,4),d!=5");
    assert_eq!(s.requires_exact_match("a"), Some("1"));
    assert_eq!(s.requires_exact_match("b"), Some("2"));
    assert_eq!(s.requires_exact_match("c"), None);
    assert_eq!(s.requires_exact_match("d"), None);
    assert_eq!(s.requires_exact_match("e"), None);
}

#[test]
fn api_selectors_convert_and_none_matches_nothing() {
    let api = metav1::LabelSelector {
        match_labels: Some(BTreeMap::from([("app".to_owned(), "web".to_owned())])),
        match_expressions: Some(vec![
            metav1::LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: Some(vec!["fe".into(), "be".into()]),
            },
            metav1::LabelSelectorRequirement {
                key: "legacy".into(),
                operator: "DoesNotExist".into(),
                values: None,
            },
        ]),
    };
    let converted = LabelSelector::try_from(&api).expect("valid selector");
    assert_eq!(converted.to_string(), "app=web,!legacy,tier in (be,fe)");
    let l = labels(&[("app", "web"), ("tier", "fe")]);
    assert_eq!(api_selector_matches(Some(&api), &l), Ok(true));
    assert_eq!(
        api_selector_matches(Some(&metav1::LabelSelector::default()), &l),
        Ok(true)
    );
    assert_eq!(api_selector_matches(None, &l), Ok(false));
    let back = LabelSelector::try_from(&converted.to_api().expect("no gt/lt")).expect("valid");
    assert_eq!(back.to_string(), "app in (web),!legacy,tier in (be,fe)");
    assert!(sel("n>1").to_api().is_err());
}

#[test]
fn api_selector_errors_match_upstream() {
    let bad_operator = metav1::LabelSelector {
        match_expressions: Some(vec![metav1::LabelSelectorRequirement {
            key: "k".into(),
            operator: "Gt".into(),
            values: Some(vec!["1".into()]),
        }]),
        ..Default::default()
    };
    assert_eq!(
        LabelSelector::try_from(&bad_operator)
            .unwrap_err()
            .to_string(),
        "\"Gt\" is not a valid label selector operator"
    );
    let empty_in = metav1::LabelSelector {
        match_expressions: Some(vec![metav1::LabelSelectorRequirement {
            key: "k".into(),
            operator: "In".into(),
            values: None,
        }]),
        ..Default::default()
    };
    assert_eq!(
        LabelSelector::try_from(&empty_in).unwrap_err().to_string(),
        "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
    );
    let exists_with_values = metav1::LabelSelector {
        match_expressions: Some(vec![metav1::LabelSelectorRequirement {
            key: "k".into(),
            operator: "Exists".into(),
            values: Some(vec!["x".into()]),
        }]),
        ..Default::default()
    };
    assert_eq!(
        LabelSelector::try_from(&exists_with_values)
            .unwrap_err()
            .to_string(),
        "values: Invalid value: []string{\"x\"}: values set must be empty for exists and does not exist"
    );
}

// ---- property tests ----

fn name_part() -> impl Strategy<Value = String> {
    "[A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?"
}

fn key() -> impl Strategy<Value = String> {
    (
        proptest::option::of("[a-z0-9]([a-z0-9-]{0,5}[a-z0-9])?(\\.[a-z0-9]{1,4})?"),
        name_part(),
    )
        .prop_map(|(prefix, name)| match prefix {
            Some(prefix) => format!("{prefix}/{name}"),
            None => name,
        })
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), name_part(), "[0-9]{1,3}"]
}

fn requirement() -> impl Strategy<Value = Requirement> {
    let ops = prop_oneof![
        Just(Operator::Equals),
        Just(Operator::DoubleEquals),
        Just(Operator::NotEquals),
        Just(Operator::In),
        Just(Operator::NotIn),
        Just(Operator::Exists),
        Just(Operator::DoesNotExist),
        Just(Operator::GreaterThan),
        Just(Operator::LessThan),
    ];
    (
        key(),
        ops,
        proptest::collection::btree_set(value(), 1..4),
        0u32..1000,
    )
        .prop_map(|(key, operator, set, n)| {
            let values = match operator {
                Operator::In | Operator::NotIn => set,
                Operator::Exists | Operator::DoesNotExist => BTreeSet::new(),
                Operator::GreaterThan | Operator::LessThan => BTreeSet::from([n.to_string()]),
                _ => set.into_iter().take(1).collect(),
            };
            Requirement {
                key,
                operator,
                values,
            }
        })
}

fn selector() -> impl Strategy<Value = LabelSelector> {
    proptest::collection::vec(requirement(), 0..5).prop_map(|mut requirements| {
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        LabelSelector { requirements }
    })
}

/// A direct reading of the documented semantics, independent of `Requirement::matches`.
fn reference_matches(s: &LabelSelector, l: &BTreeMap<String, String>) -> bool {
    s.requirements.iter().all(|r| {
        let actual = l.get(&r.key);
        let first = r.values.iter().next().cloned().unwrap_or_default();
        match r.operator {
            Operator::Equals | Operator::DoubleEquals => actual == Some(&first),
            Operator::NotEquals => actual != Some(&first),
            Operator::In => actual.is_some_and(|a| r.values.contains(a)),
            Operator::NotIn => !actual.is_some_and(|a| r.values.contains(a)),
            Operator::Exists => actual.is_some(),
            Operator::DoesNotExist => actual.is_none(),
            Operator::GreaterThan => actual
                .and_then(|a| a.parse::<i64>().ok())
                .is_some_and(|a| a > first.parse().unwrap_or(i64::MAX)),
            Operator::LessThan => actual
                .and_then(|a| a.parse::<i64>().ok())
                .is_some_and(|a| a < first.parse().unwrap_or(i64::MIN)),
        }
    })
}

fn label_set() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map(
        prop_oneof![key(), "[a-c]"],
        prop_oneof![value(), "[0-9]{1,3}"],
        0..6,
    )
}

proptest! {
    #[test]
    fn parse_of_display_is_identity(s in selector()) {
        let printed = s.to_string();
        prop_assert_eq!(LabelSelector::parse(&printed), Ok(s), "printed {}", printed);
    }

    #[test]
    fn matching_agrees_with_reference(s in selector(), l in label_set()) {
        prop_assert_eq!(s.matches(&l), reference_matches(&s, &l));
    }

    #[test]
    fn matching_selects_labels_drawn_from_the_selector(s in selector()) {
        // Labels built to satisfy every positive requirement make the two evaluations agree on
        // matches too, not only on misses.
        let l: BTreeMap<String, String> = s.requirements.iter()
            .filter_map(|r| r.values.iter().next().map(|v| (r.key.clone(), v.clone())))
            .collect();
        prop_assert_eq!(s.matches(&l), reference_matches(&s, &l));
    }

    #[test]
    fn parse_never_panics(input in "[ a-z0-9=!(),<>\\\\/._-]{0,24}") {
        let _ = LabelSelector::parse(&input);
    }
}
