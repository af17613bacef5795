//! `--controllers` selection with kube-controller-manager's and Karmada's semantics: the first
//! entry naming a controller decides (`name` enables, `-name` disables); otherwise `*` enables
//! every controller that is on by default; with neither, the controller is off.

use std::collections::BTreeSet;

/// A parsed `--controllers` value, checked against the known controller names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerSelection {
    entries: Vec<String>,
    /// The controllers this process has (the agent knows only its member-facing subset).
    known: BTreeSet<String>,
    disabled_by_default: BTreeSet<String>,
}

/// Why a `--controllers` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error("--controllers: {entry:?} is not a known controller (known: {known})")]
    Unknown { entry: String, known: String },
    #[error("--controllers: empty entry")]
    Empty,
}

impl ControllerSelection {
    /// Parses `value` (comma separated) against `known` controllers, of which
    /// `disabled_by_default` only run when named.
    pub fn parse(
        value: &str,
        known: &[&str],
        disabled_by_default: &[&str],
    ) -> Result<Self, SelectionError> {
        let known_set: BTreeSet<&str> = known.iter().copied().collect();
        let mut entries = Vec::new();
        for raw in value.split(',') {
            let entry = raw.trim();
            if entry.is_empty() {
                return Err(SelectionError::Empty);
            }
            let name = entry.strip_prefix('-').unwrap_or(entry);
            if entry != "*" && !known_set.contains(name) {
                return Err(SelectionError::Unknown {
                    entry: entry.to_owned(),
                    known: known_set.iter().copied().collect::<Vec<_>>().join(", "),
                });
            }
            entries.push(entry.to_owned());
        }
        Ok(Self {
            entries,
            known: known.iter().map(|s| (*s).to_owned()).collect(),
            disabled_by_default: disabled_by_default
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        })
    }

    /// Whether the controller `name` runs.
    pub fn is_enabled(&self, name: &str) -> bool {
        // `*` never reaches a controller outside the known set.
        if !self.known.contains(name) {
            return false;
        }
        let mut star = false;
        for entry in &self.entries {
            if entry == name {
                return true;
            }
            if entry.strip_prefix('-') == Some(name) {
                return false;
            }
            if entry == "*" {
                star = true;
            }
        }
        star && !self.disabled_by_default.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["cluster", "binding", "execution", "hpaScaleTargetMarker"];
    const OFF: &[&str] = &["hpaScaleTargetMarker"];

    fn enabled(value: &str) -> Vec<&'static str> {
        let selection = ControllerSelection::parse(value, KNOWN, OFF).expect("valid selection");
        KNOWN
            .iter()
            .copied()
            .filter(|name| selection.is_enabled(name))
            .collect()
    }

    #[test]
    fn star_enables_only_default_on_controllers() {
        assert_eq!(enabled("*"), ["cluster", "binding", "execution"]);
    }

    #[test]
    fn minus_disables_and_names_enable_default_off_ones() {
        assert_eq!(
            enabled("*,-binding,hpaScaleTargetMarker"),
            ["cluster", "execution", "hpaScaleTargetMarker"]
        );
    }

    #[test]
    fn first_entry_naming_a_controller_wins() {
        assert_eq!(enabled("-cluster,cluster,*"), ["binding", "execution"]);
        assert_eq!(enabled("cluster,-cluster"), ["cluster"]);
    }

    #[test]
    fn without_star_only_named_controllers_run() {
        assert_eq!(enabled("execution"), ["execution"]);
    }

    #[test]
    fn star_never_reaches_a_controller_outside_the_known_set() {
        // The agent knows only its member-facing controllers; the controller table has more.
        let selection = ControllerSelection::parse("*", &["execution"], &[]).expect("valid");
        assert!(selection.is_enabled("execution"));
        assert!(!selection.is_enabled("cluster"));
        assert!(!selection.is_enabled("resourceDetector"));
    }

    #[test]
    fn unknown_and_empty_entries_are_refused() {
        let err = ControllerSelection::parse("*,-nope", KNOWN, OFF).unwrap_err();
        assert!(
            err.to_string()
                .contains("\"-nope\" is not a known controller")
        );
        assert_eq!(
            ControllerSelection::parse("*,,binding", KNOWN, OFF),
            Err(SelectionError::Empty)
        );
    }
}
