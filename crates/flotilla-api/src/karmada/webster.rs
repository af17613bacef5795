//! Webster (Sainte-Laguë) apportionment, Karmada's primitive for dividing replicas by weight,
//! and the UID-derived tie-breaker of its dispenser.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

use crate::karmada::TargetCluster;
use crate::karmada::names::fnv1a_32;

/// How equal-priority parties are ordered: fewer current seats first, then by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TieBreak {
    /// Smaller name wins (no tie-breaker, empty UID, or an even UID hash).
    NameAscending,
    /// Larger name wins (an odd UID hash).
    NameDescending,
}

impl TieBreak {
    /// The dispenser's tie-breaker for a template UID: FNV-1a 32 of the UID, odd ⇒ descending.
    pub fn from_uid(uid: &str) -> Self {
        if !uid.is_empty() && fnv1a_32(uid.as_bytes()) & 1 == 1 {
            Self::NameDescending
        } else {
            Self::NameAscending
        }
    }
}

/// A party: name, votes and seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Party {
    /// Name (a cluster).
    pub name: String,
    /// Votes (a weight).
    pub votes: i64,
    /// Seats (replicas).
    pub seats: i32,
}

struct Ranked {
    party: Party,
    tie: TieBreak,
}

impl Ranked {
    fn priority(&self) -> f64 {
        // Go: float64(votes) / float64(2*seats+1), with int32 arithmetic for 2*seats+1.
        self.party.votes as f64 / f64::from(self.party.seats.wrapping_mul(2).wrapping_add(1))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    /// Greater = gets the next seat.
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.priority(), other.priority());
        if a != b {
            return a.partial_cmp(&b).unwrap_or(Ordering::Equal);
        }
        if self.party.seats != other.party.seats {
            return other.party.seats.cmp(&self.party.seats);
        }
        match self.tie {
            TieBreak::NameAscending => other.party.name.cmp(&self.party.name),
            TieBreak::NameDescending => self.party.name.cmp(&other.party.name),
        }
    }
}

/// Karmada's `AllocateWebsterSeats`: parties are the union of `votes` and `initial` (0 votes /
/// 0 seats when absent); `new_seats` seats are given one at a time to the party with the highest
/// `votes / (2·seats + 1)`. Every party is returned, sorted by name.
pub fn allocate_webster_seats(
    new_seats: i32,
    votes: &BTreeMap<String, i64>,
    initial: &BTreeMap<String, i32>,
    tie: TieBreak,
) -> Vec<Party> {
    let mut parties: BTreeMap<&str, Party> = BTreeMap::new();
    for (name, &seats) in initial {
        parties.insert(
            name.as_str(),
            Party {
                name: name.clone(),
                votes: 0,
                seats,
            },
        );
    }
    for (name, &v) in votes {
        parties
            .entry(name.as_str())
            .and_modify(|p| p.votes = v)
            .or_insert_with(|| Party {
                name: name.clone(),
                votes: v,
                seats: 0,
            });
    }
    if parties.is_empty() {
        return Vec::new();
    }
    let mut heap: BinaryHeap<Ranked> = parties
        .into_values()
        .map(|party| Ranked { party, tie })
        .collect();
    for _ in 0..new_seats.max(0) {
        let Some(mut top) = heap.pop() else { break };
        top.party.seats += 1;
        heap.push(top);
    }
    let mut out: Vec<Party> = heap.into_iter().map(|r| r.party).collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Karmada's `SpreadReplicasByTargetClusters` with the UID dispenser: divides `replicas` by the
/// weights in `weights` (a cluster's `replicas` field is its weight), on top of `initial`. A zero
/// total weight yields `initial` unchanged.
pub fn spread_replicas_by_weights(
    replicas: i32,
    weights: &[TargetCluster],
    initial: &[TargetCluster],
    uid: &str,
) -> Vec<TargetCluster> {
    if replicas == 0 && !initial.is_empty() {
        return initial.to_vec();
    }
    let total: i64 = weights.iter().map(|w| i64::from(w.replicas)).sum();
    if total == 0 {
        return initial.to_vec();
    }
    let votes = weights
        .iter()
        .map(|w| (w.name.clone(), i64::from(w.replicas)))
        .collect();
    let init = initial
        .iter()
        .map(|c| (c.name.clone(), c.replicas))
        .collect();
    allocate_webster_seats(replicas, &votes, &init, TieBreak::from_uid(uid))
        .into_iter()
        .map(|p| TargetCluster::new(p.name, p.seats))
        .collect()
}

/// Like [`spread_replicas_by_weights`] with 64-bit weights (static weights).
pub fn spread_replicas_by_static_weights(
    replicas: i32,
    weights: &BTreeMap<String, i64>,
    uid: &str,
) -> Vec<TargetCluster> {
    if weights.values().sum::<i64>() == 0 {
        return Vec::new();
    }
    allocate_webster_seats(replicas, weights, &BTreeMap::new(), TieBreak::from_uid(uid))
        .into_iter()
        .map(|p| TargetCluster::new(p.name, p.seats))
        .collect()
}

#[cfg(test)]
mod tests;
