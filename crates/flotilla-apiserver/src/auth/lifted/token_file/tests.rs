use super::*;

fn parse(text: &str) -> Result<TokenFile, AuthError> {
    TokenFile::parse(text, Path::new("/etc/flotilla/tokens.csv"))
}

fn error_line(text: &str) -> (usize, String) {
    match parse(text) {
        Err(AuthError::TokenFile { line, reason, path }) => {
            assert_eq!(path, Path::new("/etc/flotilla/tokens.csv"));
            (line, reason)
        }
        other => panic!("expected a token file error, got {other:?}"),
    }
}

#[test]
fn records_with_quotes_groups_and_optional_columns() {
    let file = parse(concat!(
        "token1,alice,uid-a,\"system:masters,dev\"\n",
        "\n",
        "token2, bob ,uid-b\r\n",
        "\"tok,en3\",\"carol \"\"c\"\"\",,ops,ignored\n",
        ",nobody,uid-x\n",
        "token5,dave,uid-d,\"\"",
    ))
    .expect("parse");
    assert_eq!(file.len(), 4);
    let alice = file.lookup("token1").expect("alice");
    assert_eq!(alice.name, "alice");
    assert_eq!(alice.uid.as_deref(), Some("uid-a"));
    assert_eq!(alice.groups, ["system:masters", "dev"]);
    // Leading space is trimmed, trailing space is kept, as Go's csv reader does.
    assert_eq!(file.lookup("token2").expect("bob").name, "bob ");
    let carol = file.lookup("tok,en3").expect("carol");
    assert_eq!(carol.name, "carol \"c\"");
    assert_eq!(carol.uid, None);
    assert_eq!(carol.groups, ["ops"]);
    assert!(file.lookup("").is_none(), "empty tokens are skipped");
    assert!(file.lookup("token5").expect("dave").groups.is_empty());
}

#[test]
fn duplicate_token_keeps_the_later_record() {
    let file = parse("t,first,1\nt,second,2\n").expect("parse");
    assert_eq!(file.len(), 1);
    assert_eq!(file.lookup("t").expect("user").name, "second");
}

#[test]
fn quoted_field_may_span_lines_and_later_lines_are_counted() {
    let (line, reason) = error_line("t1,a,\"uid\nstill uid\"\nt2,b\n");
    assert_eq!(line, 3);
    assert!(
        reason.contains("at least 3 columns") && reason.contains("found 2"),
        "{reason}"
    );
}

#[test]
fn errors_name_the_line() {
    assert_eq!(error_line("t1,a,1\nt2,b\n").0, 2);
    let (line, reason) = error_line("t1,a,1\n\nt\"2,b,2\n");
    assert_eq!(line, 3);
    assert!(reason.contains("bare \""), "{reason}");
    let (line, reason) = error_line("t1,a,1\n\"t2\"x,b,2\n");
    assert_eq!(line, 2);
    assert!(reason.contains("extraneous or missing \""), "{reason}");
    assert_eq!(error_line("t1,a,1\n\"unterminated,b,2\n").0, 2);
    // A whitespace-only line is a one-field record, as in Go.
    assert_eq!(error_line("t1,a,1\n   \n").0, 2);
}

#[test]
fn empty_file_has_no_tokens_and_debug_hides_them() {
    assert!(parse("").expect("empty").is_empty());
    let file = parse("very-secret,alice,1\n").expect("parse");
    let debug = format!("{file:?}");
    assert!(!debug.contains("very-secret"), "{debug}");
    assert!(debug.contains('1'), "{debug}");
}
