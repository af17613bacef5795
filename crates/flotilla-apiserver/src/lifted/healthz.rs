//! kube-apiserver's health endpoints (`/healthz`, `/livez`, `/readyz`): what they answer and
//! how, so load balancers, kubelet probes and runbooks (`kubectl get --raw '/readyz?verbose'`)
//! behave as against kube-apiserver.
//!
//! Ported from kubernetes/apiserver `pkg/server/healthz/healthz.go` (`handleRootHealth`, the
//! per-check handlers and `?exclude=`), at commit 24a394e516bf: every check not excluded runs;
//! a failure is reported as `[-]<name> failed: reason withheld` (the endpoint is public), with
//! status 500 and the whole list, whether or not `verbose` was asked; success is `ok`, or with
//! `verbose` the list and `<endpoint> check passed`. An excluded check reads
//! `[+]<name> excluded: ok`; names that match no check are warned about. `/<endpoint>/<check>`
//! runs one check: `ok`, or 500 with `internal server error: <error>`.

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub name: &'static str,
    /// `Err(reason)` for a failure (logged, not shown).
    pub result: Result<(), String>,
}

/// The answer to a root health request: status code and body.
pub fn root(endpoint: &str, checks: &[Checked], excluded: &[&str], verbose: bool) -> (u16, String) {
    let mut unmatched: Vec<&str> = excluded
        .iter()
        .copied()
        .filter(|name| !checks.iter().any(|c| c.name == *name))
        .collect();
    unmatched.sort_unstable();
    unmatched.dedup();
    let mut listing = String::new();
    let mut failed = false;
    for check in checks {
        if excluded.contains(&check.name) {
            listing.push_str(&format!("[+]{} excluded: ok\n", check.name));
            continue;
        }
        match &check.result {
            Ok(()) => listing.push_str(&format!("[+]{} ok\n", check.name)),
            Err(_) => {
                failed = true;
                listing.push_str(&format!("[-]{} failed: reason withheld\n", check.name));
            }
        }
    }
    if !unmatched.is_empty() {
        let quoted: Vec<String> = unmatched.iter().map(|n| format!("{n:?}")).collect();
        listing.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            quoted.join(",")
        ));
    }
    if failed {
        // http.Error appends a newline.
        return (500, format!("{listing}{endpoint} check failed\n"));
    }
    if !verbose {
        return (200, "ok".to_owned());
    }
    (200, format!("{listing}{endpoint} check passed\n"))
}

/// The answer to `/<endpoint>/<check>`.
pub fn single(check: &Checked) -> (u16, String) {
    match &check.result {
        Ok(()) => (200, "ok".to_owned()),
        Err(reason) => (500, format!("internal server error: {reason}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(name: &'static str) -> Checked {
        Checked {
            name,
            result: Ok(()),
        }
    }

    #[test]
    fn answers_read_like_kube_apiservers() {
        let fine = [ok("ping"), ok("log"), ok("etcd")];
        assert_eq!(root("readyz", &fine, &[], false), (200, "ok".into()));
        assert_eq!(
            root("readyz", &fine, &[], true),
            (
                200,
                "[+]ping ok\n[+]log ok\n[+]etcd ok\nreadyz check passed\n".into()
            )
        );
        assert_eq!(
            root("livez", &fine, &["etcd", "nonsense"], true),
            (
                200,
                "[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n\
                 warn: some health checks cannot be excluded: no matches for \"nonsense\"\n\
                 livez check passed\n"
                    .into()
            )
        );
        let broken = [
            ok("ping"),
            Checked {
                name: "etcd",
                result: Err("context deadline exceeded".into()),
            },
        ];
        assert_eq!(
            root("readyz", &broken, &[], false),
            (
                500,
                "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n".into()
            )
        );
        // Excluding the failing check makes the endpoint pass.
        assert_eq!(
            root("readyz", &broken, &["etcd"], false),
            (200, "ok".into())
        );
        assert_eq!(single(&broken[0]), (200, "ok".into()));
        assert_eq!(
            single(&broken[1]),
            (
                500,
                "internal server error: context deadline exceeded\n".into()
            )
        );
    }
}
