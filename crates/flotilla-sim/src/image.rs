//! Which container images the simulated kubelets cannot pull, and what the container runtime
//! says when a pull fails. Pure: no I/O, no pods.
//!
//! Karmada's e2e cases make a workload unhealthy with an image nobody can pull
//! (`fake/nginx:1.19.0`: an image override replacing the registry with `fake`); the default
//! rules cover that convention and RFC 2606's `.invalid` domain. The check runs for every
//! container the kubelets start, so it only slices the reference: no parsing into owned parts,
//! no allocation, for the images that pull.

/// The rules (setting `unpullableImages`; see [`crate::config::SimConfig::unpullable_images`]).
/// An image is refused when its repository's first path component is one of `repositories`,
/// or its registry host matches one of `registries` (an entry starting with `.` is a suffix:
/// `.invalid` matches `registry.invalid`; others match the host exactly; ports are ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnpullableImages {
    pub repositories: Vec<String>,
    pub registries: Vec<String>,
}

impl Default for UnpullableImages {
    fn default() -> Self {
        UnpullableImages {
            repositories: vec!["fake".to_owned()],
            registries: vec![".invalid".to_owned()],
        }
    }
}

/// Why a pull fails, which decides what the runtime reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The registry has no such repository (or will not say).
    Repository,
    /// The registry's host does not resolve.
    Registry,
}

impl UnpullableImages {
    /// Whether no image is ever refused.
    pub fn is_empty(&self) -> bool {
        self.repositories.is_empty() && self.registries.is_empty()
    }

    /// Why `image` cannot be pulled, or `None` when it can.
    pub fn refusal(&self, image: &str) -> Option<Refusal> {
        if self.is_empty() {
            return None;
        }
        let (host, path) = split_host(image);
        if let Some(host) = host {
            let name = without_port(host);
            if self.registries.iter().any(|r| host_matches(r, name)) {
                return Some(Refusal::Registry);
            }
        }
        let first = path.split(['/', ':', '@']).next().unwrap_or("");
        self.repositories
            .iter()
            .any(|r| r == first)
            .then_some(Refusal::Repository)
    }

    /// Checks the rules, naming the entry at fault (`repositories[0]`, relative to the
    /// setting).
    pub fn validate(&self) -> Result<(), (String, String)> {
        for (i, r) in self.repositories.iter().enumerate() {
            if r.is_empty() || r.contains(['/', ':', '@']) {
                return Err((
                    format!("repositories[{i}]"),
                    format!("{r:?} is not one path component (non-empty, without '/', ':', '@')"),
                ));
            }
        }
        for (i, r) in self.registries.iter().enumerate() {
            let name = r.strip_prefix('.').unwrap_or(r);
            if name.is_empty() || r.contains(['/', ':', '@']) {
                return Err((
                    format!("registries[{i}]"),
                    format!(
                        "{r:?} is not a host name or a '.'-suffix (non-empty, without '/', ':', '@')"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// The registry host of a reference (the first component when it has a `.` or `:` or is
/// `localhost`, as Docker decides) and the rest of it.
fn split_host(image: &str) -> (Option<&str>, &str) {
    match image.split_once('/') {
        Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => {
            (Some(first), rest)
        }
        _ => (None, image),
    }
}

fn without_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.split(':').next().unwrap_or(host)
}

fn host_matches(rule: &str, host: &str) -> bool {
    if rule.starts_with('.') {
        host.len() > rule.len()
            && host.as_bytes()[host.len() - rule.len()..].eq_ignore_ascii_case(rule.as_bytes())
    } else {
        host.eq_ignore_ascii_case(rule)
    }
}

/// The reference as containerd resolves it: registry and `library/` filled in, `:latest` when
/// there is neither tag nor digest (`fake/nginx` → `docker.io/fake/nginx:latest`).
pub fn qualified(image: &str) -> String {
    let (host, path) = split_host(image);
    let mut full = match host {
        Some(host) => format!("{host}/{path}"),
        None if path.contains('/') => format!("docker.io/{path}"),
        None => format!("docker.io/library/{path}"),
    };
    let last = full.rsplit('/').next().unwrap_or("");
    if !last.contains([':', '@']) {
        full.push_str(":latest");
    }
    full
}

/// The message of a failed pull, as kubelet reports it in the container's `ErrImagePull`
/// state: the container runtime's (containerd's) error, verbatim.
pub fn pull_error(image: &str, refusal: Refusal) -> String {
    let full = qualified(image);
    let cause = match refusal {
        Refusal::Repository => "pull access denied, repository does not exist or may require \
             authorization: server message: insufficient_scope: authorization failed"
            .to_owned(),
        Refusal::Registry => {
            let (host, path) = split_host(&full);
            let host = host.unwrap_or("docker.io");
            let (repository, reference) = match path.split_once('@') {
                Some((repository, digest)) => (repository, digest),
                None => path.rsplit_once(':').unwrap_or((path, "latest")),
            };
            format!(
                "failed to do request: Head \"https://{host}/v2/{repository}/manifests/{reference}\": \
                 dial tcp: lookup {}: no such host",
                without_port(host)
            )
        }
    };
    format!(
        "rpc error: code = Unknown desc = failed to pull and unpack image \"{full}\": failed to \
         resolve reference \"{full}\": {cause}"
    )
}

/// The message of the `ImagePullBackOff` state (kubelet's `images.imageManager`, v1.32).
pub fn back_off_message(image: &str) -> String {
    format!("Back-off pulling image {image:?}")
}

#[cfg(test)]
mod tests;
