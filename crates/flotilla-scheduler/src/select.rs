//! Cluster selection (Karmada's `spreadconstraint` package): candidate details (score,
//! overflow tier, estimated replicas), region grouping with group scores, and the cluster and
//! region selection algorithms including the `selectGroups` DFS.

use std::collections::BTreeMap;

use flotilla_api::karmada::{
    Cluster, DIVISION_WEIGHTED, Placement, REPLICA_SCHEDULING_DIVIDED,
    REPLICA_SCHEDULING_DUPLICATED, ResourceBindingSpec, SPREAD_BY_CLUSTER, SPREAD_BY_REGION,
    SpreadConstraint,
};

/// Need-replicas value meaning "ignore capacity".
pub const INVALID_REPLICAS: i32 = -1;
/// Multiplier that makes a group's replica figure dominate its average score.
const WEIGHT_UNIT: i64 = 1000;

/// One candidate cluster as selection and assignment see it.
#[derive(Debug, Clone)]
pub struct ClusterDetail<'a> {
    /// Cluster name.
    pub name: &'a str,
    /// Total score.
    pub score: i64,
    /// 0 = primary affinity, n = n-th overflow affinity, 1000 = none.
    pub overflow_order: i32,
    /// Estimated allocatable replicas plus replicas already assigned here.
    pub available_replicas: i64,
    /// Estimated allocatable replicas.
    pub allocatable_replicas: i32,
    /// The cluster.
    pub cluster: &'a Cluster,
}

/// Orders candidates: overflow tier asc, score desc, available replicas desc, name asc.
pub fn sort_candidates(candidates: &mut [ClusterDetail<'_>]) {
    candidates.sort_by(|a, b| {
        a.overflow_order
            .cmp(&b.overflow_order)
            .then(b.score.cmp(&a.score))
            .then(b.available_replicas.cmp(&a.available_replicas))
            .then(a.name.cmp(b.name))
    });
}

/// Whether static weights make spread constraints irrelevant (Divided, Weighted, and either no
/// weight preference or a static list without dynamic weight).
pub fn should_ignore_spread_constraint(placement: &Placement) -> bool {
    let Some(strategy) = &placement.replica_scheduling else {
        return false;
    };
    strategy.replica_scheduling_type == REPLICA_SCHEDULING_DIVIDED
        && strategy.replica_division_preference == DIVISION_WEIGHTED
        && match &strategy.weight_preference {
            None => true,
            Some(p) => !p.static_weight_list.is_empty() && p.dynamic_weight.is_empty(),
        }
}

fn should_ignore_available_resource(placement: &Placement) -> bool {
    placement
        .replica_scheduling
        .as_ref()
        .is_none_or(|s| s.replica_scheduling_type == REPLICA_SCHEDULING_DUPLICATED)
}

/// A region and its candidates (in candidate order).
#[derive(Debug, Clone)]
struct RegionInfo<'a, 'b> {
    name: &'a str,
    score: i64,
    clusters: Vec<&'b ClusterDetail<'a>>,
}

/// Karmada's `SelectBestClusters`: all candidates when there are no spread constraints or
/// static weights apply; otherwise the region algorithm (when a region constraint exists) or the
/// cluster algorithm. `candidates` must be sorted with [`sort_candidates`].
pub fn select_best_clusters<'a>(
    placement: &Placement,
    spec: &ResourceBindingSpec,
    candidates: &[ClusterDetail<'a>],
    need_replicas: i32,
) -> Result<Vec<ClusterDetail<'a>>, String> {
    if placement.spread_constraints.is_empty() || should_ignore_spread_constraint(placement) {
        return Ok(candidates.to_vec());
    }
    let need_replicas = if should_ignore_available_resource(placement) {
        INVALID_REPLICAS
    } else {
        need_replicas
    };
    // Later constraints with the same field win, as with Go's map assignment.
    let mut by_field: BTreeMap<&str, &SpreadConstraint> = BTreeMap::new();
    for constraint in &placement.spread_constraints {
        by_field.insert(&constraint.spread_by_field, constraint);
    }
    let default = SpreadConstraint::default();
    let cluster_constraint = by_field.get(SPREAD_BY_CLUSTER).copied();
    if let Some(region) = by_field.get(SPREAD_BY_REGION) {
        let regions = group_regions(placement, spec, candidates, region.min_groups);
        return select_by_region(region, cluster_constraint.unwrap_or(&default), regions);
    }
    if let Some(cluster) = cluster_constraint {
        return select_by_cluster(cluster, candidates, need_replicas);
    }
    Err("just support cluster and region spread constraint".to_owned())
}

fn select_by_cluster<'a>(
    constraint: &SpreadConstraint,
    candidates: &[ClusterDetail<'a>],
    need_replicas: i32,
) -> Result<Vec<ClusterDetail<'a>>, String> {
    let total = candidates.len();
    if total < constraint.min_groups {
        return Err(
            "the number of feasible clusters is less than spreadConstraint.MinGroups".to_owned(),
        );
    }
    let need = total.min(constraint.max_groups);
    if need_replicas == INVALID_REPLICAS {
        return Ok(candidates[..need].to_vec());
    }
    let mut all = candidates.to_vec();
    let enough = |selected: &[ClusterDetail<'_>]| {
        selected.iter().map(|c| c.available_replicas).sum::<i64>() >= i64::from(need_replicas)
    };
    // Walk the selection from its last position backwards, swapping in the unselected cluster
    // with the most available replicas when it has strictly more.
    let mut position = need as isize - 1;
    while !enough(&all[..need]) && position >= 0 {
        let current = all[position as usize].available_replicas;
        let mut best: Option<usize> = None;
        let mut best_available = current;
        for (i, c) in all.iter().enumerate().skip(need) {
            if c.available_replicas > best_available {
                best = Some(i);
                best_available = c.available_replicas;
            }
        }
        if let Some(i) = best {
            all.swap(position as usize, i);
        }
        position -= 1;
    }
    if !enough(&all[..need]) || need == 0 {
        return Err(format!("no enough resource when selecting {need} clusters"));
    }
    all.truncate(need);
    Ok(all)
}

fn group_regions<'a, 'b>(
    placement: &Placement,
    spec: &ResourceBindingSpec,
    candidates: &'b [ClusterDetail<'a>],
    region_min_groups: usize,
) -> BTreeMap<&'a str, RegionInfo<'a, 'b>> {
    let mut regions: BTreeMap<&'a str, RegionInfo<'a, 'b>> = BTreeMap::new();
    for c in candidates {
        let region = c.cluster.spec.region.as_str();
        if region.is_empty() {
            continue;
        }
        regions
            .entry(region)
            .or_insert_with(|| RegionInfo {
                name: region,
                score: 0,
                clusters: Vec::new(),
            })
            .clusters
            .push(c);
    }
    for info in regions.values_mut() {
        info.score = group_score(&info.clusters, placement, spec, region_min_groups);
    }
    regions
}

/// Karmada's `calcGroupScore`.
fn group_score(
    clusters: &[&ClusterDetail<'_>],
    placement: &Placement,
    spec: &ResourceBindingSpec,
    min_groups: usize,
) -> i64 {
    let replicas = i64::from(spec.replicas);
    if placement.replica_scheduling_type() == REPLICA_SCHEDULING_DUPLICATED {
        let valid: Vec<_> = clusters
            .iter()
            .filter(|c| c.available_replicas >= replicas)
            .collect();
        if valid.is_empty() {
            return 0;
        }
        let n = valid.len() as i64;
        return n * WEIGHT_UNIT + valid.iter().map(|c| c.score).sum::<i64>() / n;
    }
    // Go: int64(math.Ceil(float64(replicas) / float64(minGroups))); a zero divisor yields
    // ±Inf/NaN, which amd64 converts to MinInt64.
    let target = if min_groups == 0 {
        i64::MIN
    } else {
        (replicas as f64 / min_groups as f64).ceil() as i64
    };
    let cluster_min = placement
        .spread_constraints
        .iter()
        .filter(|c| c.spread_by_field == SPREAD_BY_CLUSTER)
        .map(|c| c.min_groups)
        .next_back()
        .unwrap_or(0)
        .max(min_groups) as i64;
    let (mut available, mut score, mut counted) = (0i64, 0i64, 0i64);
    for c in clusters {
        available += c.available_replicas;
        score += c.score;
        counted += 1;
        if counted >= cluster_min && available >= target {
            break;
        }
    }
    if available < target {
        available * WEIGHT_UNIT + score / clusters.len() as i64
    } else {
        target.wrapping_mul(WEIGHT_UNIT) + score / counted
    }
}

fn select_by_region<'a>(
    region: &SpreadConstraint,
    cluster: &SpreadConstraint,
    regions: BTreeMap<&'a str, RegionInfo<'a, '_>>,
) -> Result<Vec<ClusterDetail<'a>>, String> {
    if regions.len() < region.min_groups {
        return Err(
            "the number of feasible region is less than spreadConstraint.MinGroups".to_owned(),
        );
    }
    let groups: Vec<GroupInfo> = regions
        .values()
        .map(|r| GroupInfo {
            name: r.name.to_owned(),
            value: r.clusters.len(),
            weight: r.score,
        })
        .collect();
    let chosen = select_groups(
        groups,
        region.min_groups,
        region.max_groups,
        cluster.min_groups,
    );
    if chosen.is_empty() {
        return Err(
            "the number of clusters is less than the cluster spreadConstraint.MinGroups".to_owned(),
        );
    }
    let mut selected = Vec::new();
    let mut rest = Vec::new();
    for name in &chosen {
        let info = &regions[name.as_str()];
        selected.push(info.clusters[0].clone());
        rest.extend(info.clusters[1..].iter().map(|c| (*c).clone()));
    }
    let need = (rest.len() + selected.len()).min(cluster.max_groups);
    let rest_count = need.saturating_sub(selected.len());
    if rest_count > 0 {
        sort_candidates(&mut rest);
        selected.extend(rest.into_iter().take(rest_count));
    }
    Ok(selected)
}

/// A group for [`select_groups`]: `value` = number of clusters, `weight` = group score.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    /// Group name.
    pub name: String,
    /// Number of clusters in the group.
    pub value: usize,
    /// Group score.
    pub weight: i64,
}

#[derive(Debug, Clone)]
struct Path {
    id: usize,
    groups: Vec<GroupInfo>,
    weight: i64,
    value: usize,
}

/// Karmada's `selectGroups`: enumerate, depth first over groups sorted by (clusters asc, score
/// desc, name asc), every combination of `min..=max` groups with at least `target` clusters;
/// choose the highest total score, then most clusters, then the earliest found, but prefer a
/// shorter combination that is a prefix (after ordering each by score desc, name asc) of the
/// chosen one. Returns the chosen group names in that order (empty if none).
pub fn select_groups(
    mut groups: Vec<GroupInfo>,
    min: usize,
    max: usize,
    target: usize,
) -> Vec<String> {
    if groups.is_empty() {
        return Vec::new();
    }
    if groups.len() > 1 {
        groups.sort_by(|a, b| {
            a.value
                .cmp(&b.value)
                .then(b.weight.cmp(&a.weight))
                .then(a.name.cmp(&b.name))
        });
    }
    let mut paths: Vec<Path> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut next_id = 0usize;
    dfs(
        &groups,
        min,
        max,
        target,
        0,
        0,
        &mut stack,
        &mut paths,
        &mut next_id,
    );
    if paths.is_empty() {
        return Vec::new();
    }
    let best = if paths.len() == 1 {
        paths.swap_remove(0)
    } else {
        paths.sort_by(|a, b| {
            b.weight
                .cmp(&a.weight)
                .then(b.value.cmp(&a.value))
                .then(a.id.cmp(&b.id))
        });
        let mut best = paths[0].clone();
        for candidate in &paths[1..] {
            let is_prefix = candidate.groups.len() < best.groups.len()
                && candidate
                    .groups
                    .iter()
                    .zip(&best.groups)
                    .all(|(a, b)| a.name == b.name);
            if is_prefix {
                best = candidate.clone();
            }
        }
        best
    };
    best.groups.into_iter().map(|g| g.name).collect()
}

#[allow(clippy::too_many_arguments)]
fn dfs(
    groups: &[GroupInfo],
    min: usize,
    max: usize,
    target: usize,
    sum: usize,
    begin: usize,
    stack: &mut Vec<usize>,
    paths: &mut Vec<Path>,
    next_id: &mut usize,
) {
    if sum >= target && stack.len() >= min && stack.len() <= max {
        // Go increments the root path's id before copying it, so ids start at 1.
        *next_id += 1;
        let mut chosen: Vec<GroupInfo> = stack.iter().map(|&i| groups[i].clone()).collect();
        let weight = chosen.iter().map(|g| g.weight).sum();
        let value = chosen.iter().map(|g| g.value).sum();
        chosen.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.name.cmp(&b.name)));
        paths.push(Path {
            id: *next_id,
            groups: chosen,
            weight,
            value,
        });
        return;
    }
    if stack.len() >= max {
        return;
    }
    for i in begin..groups.len() {
        stack.push(i);
        dfs(
            groups,
            min,
            max,
            target,
            sum + groups[i].value,
            i + 1,
            stack,
            paths,
            next_id,
        );
        // Go stops backtracking when every group is needed to reach the minimum.
        if groups.len() == min {
            break;
        }
        stack.pop();
    }
}

#[cfg(test)]
mod tests;
