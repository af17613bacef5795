//! Static bearer tokens in kube-apiserver's `--token-auth-file` CSV format:
//! `token,user,uid[,"group1,group2"]`, one record per line.
//!
//! Follows `k8s.io/apiserver/pkg/authentication/token/tokenfile/tokenfile.go` (`NewCSV`) read
//! through Go's `encoding/csv` with `TrimLeadingSpace` and a variable field count: at least three
//! columns, records with an empty token are skipped, a duplicate token replaces the earlier one,
//! the fourth column is split on commas into groups, further columns are ignored. One deliberate
//! difference: empty group names (an empty fourth column) are dropped rather than kept as `""`.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::auth::AuthError;
use crate::auth::authn::UserInfo;

/// Tokens and the users they stand for. `Debug` shows only how many there are.
#[derive(Clone, Default)]
pub struct TokenFile {
    tokens: HashMap<String, UserInfo>,
}

impl TokenFile {
    /// Reads and parses the token file at `path`.
    pub fn load(path: &Path) -> Result<TokenFile, AuthError> {
        let text = std::fs::read_to_string(path).map_err(|source| AuthError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        TokenFile::parse(&text, path)
    }

    /// Parses token file contents; `path` only names the file in errors.
    pub fn parse(text: &str, path: &Path) -> Result<TokenFile, AuthError> {
        let error = |line, reason: String| AuthError::TokenFile {
            path: PathBuf::from(path),
            line,
            reason,
        };
        let mut tokens = HashMap::new();
        for (line, fields) in csv_records(text).map_err(|(line, reason)| error(line, reason))? {
            let [token, name, uid, rest @ ..] = fields.as_slice() else {
                return Err(error(
                    line,
                    format!(
                        "must have at least 3 columns (token, user name, user uid), found {}",
                        fields.len()
                    ),
                ));
            };
            if token.is_empty() {
                tracing::warn!(path = %path.display(), line, "skipping a record with an empty token");
                continue;
            }
            let groups = rest
                .first()
                .map(|g| {
                    g.split(',')
                        .filter(|g| !g.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let user = UserInfo {
                name: name.clone(),
                uid: Some(uid.clone()).filter(|u| !u.is_empty()),
                groups,
                extra: Default::default(),
            };
            if tokens.insert(token.clone(), user).is_some() {
                tracing::warn!(path = %path.display(), line, "duplicate token; the later record wins");
            }
        }
        Ok(TokenFile { tokens })
    }

    /// The user `token` stands for.
    pub fn lookup(&self, token: &str) -> Option<&UserInfo> {
        self.tokens.get(token)
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

impl fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenFile")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

/// A CSV record: the line it starts on and its fields.
type Record = (usize, Vec<String>);

/// Records of `text` as Go's `encoding/csv` reads them with `TrimLeadingSpace`: blank lines
/// skipped, `\r\n` taken as `\n`, quoted fields may hold commas, newlines and `""` for a quote.
/// Each record comes with the line it starts on; errors carry the line they occur on.
fn csv_records(text: &str) -> Result<Vec<Record>, (usize, String)> {
    const MISSING_QUOTE: &str = "extraneous or missing \" in quoted-field";
    let text = text.replace("\r\n", "\n");
    let mut chars = text.chars().peekable();
    let mut line = 1;
    let mut records = Vec::new();
    while let Some(&first) = chars.peek() {
        if first == '\n' {
            chars.next();
            line += 1;
            continue;
        }
        let start = line;
        let mut fields = Vec::new();
        'fields: loop {
            while chars.next_if(|c| c.is_whitespace() && *c != '\n').is_some() {}
            let mut field = String::new();
            if chars.next_if_eq(&'"').is_some() {
                loop {
                    match chars.next() {
                        None => return Err((start, MISSING_QUOTE.into())),
                        Some('"') if chars.next_if_eq(&'"').is_some() => field.push('"'),
                        Some('"') => break,
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            field.push(c);
                        }
                    }
                }
                match chars.peek() {
                    Some(',') => {
                        chars.next();
                        fields.push(field);
                    }
                    Some('\n') | None => {
                        fields.push(field);
                        break 'fields;
                    }
                    Some(_) => return Err((line, MISSING_QUOTE.into())),
                }
            } else {
                loop {
                    match chars.peek() {
                        Some(',') => {
                            chars.next();
                            fields.push(field);
                            continue 'fields;
                        }
                        Some('\n') | None => {
                            fields.push(field);
                            break 'fields;
                        }
                        Some('"') => return Err((line, "bare \" in non-quoted-field".into())),
                        Some(&c) => {
                            chars.next();
                            field.push(c);
                        }
                    }
                }
            }
        }
        if chars.next_if_eq(&'\n').is_some() {
            line += 1;
        }
        records.push((start, fields));
    }
    Ok(records)
}

#[cfg(test)]
mod tests;
