//! The kubelet's `$(VAR)` references in a container's `command`, `args` and env values.
//!
//! Ported from kubernetes/kubernetes v1.33 `third_party/forked/golang/expansion/expand.go`
//! (`Expand`, `tryReadVariableName`), written in our own code: `$(NAME)` becomes the value of
//! `NAME` when it is defined and stays as written otherwise; `$$` is an escaped `$`; any other
//! `$` is kept.

/// Expands the references in `input` with `lookup`.
pub fn expand(input: &str, lookup: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.as_bytes().first() {
            Some(b'$') => {
                out.push('$');
                rest = &after[1..];
            }
            Some(b'(') => match after.find(')') {
                Some(close) => {
                    let name = &after[1..close];
                    match lookup(name) {
                        Some(value) => out.push_str(&value),
                        None => {
                            out.push_str("$(");
                            out.push_str(name);
                            out.push(')');
                        }
                    }
                    rest = &after[close + 1..];
                }
                None => {
                    // An unclosed reference is kept as written.
                    out.push_str("$(");
                    rest = &after[1..];
                }
            },
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::expand;

    #[test]
    fn defined_references_expand_and_others_stay() {
        let lookup = |name: &str| (name == "GREETING").then(|| "hello".to_owned());
        assert_eq!(expand("$(GREETING) world", lookup), "hello world");
        assert_eq!(expand("$(MISSING)", lookup), "$(MISSING)");
        assert_eq!(expand("$$(GREETING)", lookup), "$(GREETING)");
        assert_eq!(expand("cost: $5 $", lookup), "cost: $5 $");
        assert_eq!(expand("$(GREETING", lookup), "$(GREETING");
    }
}
