use super::*;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn generated_tokens_have_the_bootstrap_format() {
    let id = random_chars(TOKEN_ALPHABET, 6).expect("random");
    let secret = random_chars(TOKEN_ALPHABET, 16).expect("random");
    let token = format!("{id}.{secret}");
    assert!(bt::parse_token(&token).is_some(), "{token}");
    assert!(discovery::Token::parse(&token).is_ok());
    let again = random_chars(TOKEN_ALPHABET, 16).expect("random");
    assert_ne!(secret, again, "two secrets differ");
}

#[test]
fn the_secret_is_karmadas_and_lists_back() {
    let created: Timestamp = "2030-01-01T00:00:00Z".parse().expect("time");
    let expiration = created
        .saturating_add(SignedDuration::from_hours(24))
        .expect("in range");
    let secret = token_secret(
        "abcdef",
        "0123456789abcdef",
        "",
        Some(expiration),
        &strings(&["signing", "authentication"]),
        &strings(&[TOKEN_GROUP]),
    );
    assert_eq!(secret["metadata"]["name"], "bootstrap-token-abcdef");
    assert_eq!(secret["metadata"]["namespace"], "kube-system");
    assert_eq!(secret["type"], "bootstrap.kubernetes.io/token");
    assert_eq!(bt::data(&secret, "expiration"), "2030-01-02T00:00:00Z");
    assert_eq!(bt::data(&secret, "usage-bootstrap-signing"), "true");
    assert_eq!(bt::data(&secret, "usage-bootstrap-authentication"), "true");
    assert_eq!(bt::data(&secret, "auth-extra-groups"), TOKEN_GROUP);
    assert!(secret["data"].get("description").is_none());
    assert_eq!(bt::groups(&secret).expect("valid groups").len(), 2);

    let an_hour_later = created
        .saturating_add(SignedDuration::from_hours(1))
        .expect("in range");
    let row = token_row(&secret, an_hour_later).expect("a token");
    assert_eq!(
        row,
        [
            "abcdef.0123456789abcdef",
            "23h",
            "2030-01-02T00:00:00Z",
            "authentication,signing",
            "<none>",
            TOKEN_GROUP
        ]
        .map(str::to_owned)
    );

    let forever = token_secret("abcdef", "0123456789abcdef", "for m1", None, &[], &[]);
    assert!(forever["data"].get("expiration").is_none());
    let row = token_row(&forever, created).expect("a token");
    assert_eq!(
        row[1..],
        ["<forever>", "<never>", "<none>", "for m1", "<none>"].map(str::to_owned)
    );
}

#[test]
fn secrets_that_are_not_tokens_are_reported() {
    let mut renamed = token_secret("abcdef", "0123456789abcdef", "", None, &[], &[]);
    renamed["metadata"]["name"] = "bootstrap-token-zzzzzz".into();
    let error = token_row(&renamed, Timestamp::now()).expect_err("name mismatch");
    assert!(
        error.contains("Expected: \"bootstrap-token-abcdef\""),
        "{error}"
    );
    let mut no_secret = token_secret("abcdef", "0123456789abcdef", "", None, &[], &[]);
    no_secret["data"]
        .as_object_mut()
        .expect("data")
        .remove("token-secret");
    let error = token_row(&no_secret, Timestamp::now()).expect_err("no secret");
    assert!(error.contains("no token-secret data"), "{error}");
}

#[test]
fn the_table_aligns_kubectls_way() {
    let rows = [[
        "abcdef.0123456789abcdef",
        "23h",
        "2030-01-02T00:00:00Z",
        "authentication,signing",
        "<none>",
        TOKEN_GROUP,
    ]
    .map(str::to_owned)];
    let text = table(&rows);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with("TOKEN                     TTL   EXPIRES                "),
        "{text}"
    );
    assert!(lines[0].ends_with("DESCRIPTION   EXTRA GROUPS"), "{text}");
    assert!(
        lines[1].starts_with("abcdef.0123456789abcdef   23h   2030-01-02T00:00:00Z   "),
        "{text}"
    );
    assert_eq!(
        table(&[]),
        "TOKEN   TTL   EXPIRES   USAGES   DESCRIPTION   EXTRA GROUPS\n"
    );
}

#[test]
fn durations_print_as_kubectl_ages() {
    let cases = [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (59, "59s"),
        (60, "1m"),
        (3599, "59m"),
        (3600, "1h"),
        (86399, "23h"),
        (86400, "1d"),
        (86400 * 365, "1y"),
    ];
    for (seconds, text) in cases {
        assert_eq!(
            short_human_duration(SignedDuration::from_secs(seconds)),
            text,
            "{seconds}"
        );
    }
}

#[test]
fn delete_takes_ids_or_tokens_and_refuses_anything_else() {
    assert_eq!(token_id("abcdef").expect("an id"), "abcdef");
    assert_eq!(
        token_id("abcdef.0123456789abcdef").expect("a token"),
        "abcdef"
    );
    for bad in ["ABCDEF", "abcdef.short", "abc"] {
        let error = token_id(bad).expect_err(bad).to_string();
        assert_eq!(
            error,
            r#"given token didn't match pattern "\\A([a-z0-9]{6})\\z" or "\\A([a-z0-9]{6})\\.([a-z0-9]{16})\\z""#
        );
    }
}

#[test]
fn usages_and_groups_are_checked_before_anything_is_created() {
    assert!(validate_usages(&strings(&["signing", "authentication"])).is_ok());
    let error = validate_usages(&strings(&["signing", "admin"])).expect_err("unknown");
    assert!(
        error
            .to_string()
            .starts_with("--usages: invalid bootstrap token usage string: admin")
    );
    assert!(validate_groups(&strings(&[TOKEN_GROUP])).is_ok());
    let error = validate_groups(&strings(&["system:masters"])).expect_err("not a bootstrap group");
    assert!(
        error
            .to_string()
            .starts_with("--groups: bootstrap group \"system:masters\"")
    );
}

#[test]
fn the_register_commands_name_the_server_token_and_pins() {
    let target = RegisterTarget {
        address: "10.0.0.1:6443".into(),
        pins: vec![format!("sha256:{}", "a".repeat(64))],
    };
    let text = target.commands("abcdef.0123456789abcdef");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "flotilla agent --bootstrap-server 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:{} --cluster-name <CLUSTER_NAME> --cluster-kubeconfig <MEMBER_KUBECONFIG>",
            "a".repeat(64)
        )
    );
    assert_eq!(
        lines[1],
        format!(
            "karmadactl register 10.0.0.1:6443 --token abcdef.0123456789abcdef --discovery-token-ca-cert-hash sha256:{}",
            "a".repeat(64)
        )
    );
}
