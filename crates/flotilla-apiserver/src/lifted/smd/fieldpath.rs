//! Field sets (`fieldpath.Set`): a tree of path elements whose nodes may be members, with the
//! `fieldsV1` encoding kube-apiserver stores in `managedFields` and the path strings its
//! conflict messages print.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// One step of a path: an object field, a list-map item by its key fields, a set item by its
/// value, or a list index (atomic lists never need one; kept for parsing).
#[derive(Debug, Clone, PartialEq)]
pub enum PathElement {
    Field(String),
    /// Key fields sorted by name.
    Key(Vec<(String, Value)>),
    Value(Value),
    Index(u64),
}

impl Eq for PathElement {}

fn rank(pe: &PathElement) -> u8 {
    match pe {
        PathElement::Field(_) => 0,
        PathElement::Key(_) => 1,
        PathElement::Value(_) => 2,
        PathElement::Index(_) => 3,
    }
}

/// Values order as structured-merge-diff's `value.Compare`: by type (null, bool, number,
/// string, list, map), then by content.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn type_rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            Value::Array(_) => 4,
            Value::Object(_) => 5,
        }
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<_> = x.iter().collect();
            let mut ys: Vec<_> = y.iter().collect();
            xs.sort_by(|p, q| p.0.cmp(q.0));
            ys.sort_by(|p, q| p.0.cmp(q.0));
            for ((kx, vx), (ky, vy)) in xs.iter().zip(&ys) {
                let c = kx.cmp(ky).then_with(|| compare_values(vx, vy));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => type_rank(a).cmp(&type_rank(b)),
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for ((na, va), (nb, vb)) in a.iter().zip(b) {
                    let c = na.cmp(nb).then_with(|| compare_values(va, vb));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => rank(self).cmp(&rank(other)),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// How a scalar prints in a path string: strings quoted as Go's `%q`, the rest as JSON.
fn value_string(v: &Value) -> String {
    match v {
        Value::String(s) => crate::auth::lifted::forbidden::go_quote(s),
        other => other.to_string(),
    }
}

impl PathElement {
    /// The `fieldsV1` key: `f:name`, `k:{"name":"c"}`, `v:"x"`, `i:0`.
    pub fn encode(&self) -> String {
        match self {
            PathElement::Field(name) => {
                let mut key = String::with_capacity(2 + name.len());
                key.push_str("f:");
                key.push_str(name);
                key
            }
            PathElement::Key(fields) => {
                let mut map = Map::new();
                for (name, value) in fields {
                    map.insert(name.clone(), value.clone());
                }
                format!("k:{}", Value::Object(map))
            }
            PathElement::Value(value) => format!("v:{value}"),
            PathElement::Index(index) => format!("i:{index}"),
        }
    }

    fn decode(key: &str) -> Option<PathElement> {
        let (kind, rest) = key.split_at_checked(2)?;
        match kind {
            "f:" => Some(PathElement::Field(rest.to_owned())),
            "k:" => match serde_json::from_str::<Value>(rest).ok()? {
                Value::Object(map) => {
                    let mut fields: Vec<(String, Value)> = map.into_iter().collect();
                    fields.sort_by(|a, b| a.0.cmp(&b.0));
                    Some(PathElement::Key(fields))
                }
                _ => None,
            },
            "v:" => serde_json::from_str(rest).ok().map(PathElement::Value),
            "i:" => rest.parse().ok().map(PathElement::Index),
            _ => None,
        }
    }

    /// `.name`, `[name="c"]`, `[containerPort=80,protocol="TCP"]`, `[="x"]`, `[0]`.
    pub fn display(&self) -> String {
        match self {
            PathElement::Field(name) => format!(".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| format!("{n}={}", value_string(v)))
                    .collect();
                format!("[{}]", parts.join(","))
            }
            PathElement::Value(value) => format!("[={}]", value_string(value)),
            PathElement::Index(index) => format!("[{index}]"),
        }
    }
}

/// A path from the object root.
pub type Path = Vec<PathElement>;

/// How a path prints in conflict messages.
pub fn display_path(path: &[PathElement]) -> String {
    path.iter().map(PathElement::display).collect()
}

/// A set of paths, as a tree: each node says whether its own path is a member.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Set {
    pub member: bool,
    pub children: BTreeMap<PathElement, Set>,
}

impl Set {
    pub fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(Set::is_empty)
    }

    /// The node at `pe`, created when missing.
    pub fn child(&mut self, pe: PathElement) -> &mut Set {
        self.children.entry(pe).or_default()
    }

    pub fn insert(&mut self, path: &[PathElement]) {
        let mut node = self;
        for pe in path {
            node = node.child(pe.clone());
        }
        node.member = true;
    }

    pub fn has(&self, path: &[PathElement]) -> bool {
        let mut node = self;
        for pe in path {
            match node.children.get(pe) {
                Some(child) => node = child,
                None => return false,
            }
        }
        node.member
    }

    fn prune(mut self) -> Set {
        self.children.retain(|_, child| !child.is_empty());
        self
    }

    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.member |= other.member;
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Members of `self` that are not members of `other`, path by path.
    pub fn difference(&self, other: &Set) -> Set {
        let mut out = Set {
            member: self.member && !other.member,
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            let kept = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), kept);
        }
        out.prune()
    }

    /// Makes `self` its [`Set::difference`] with `other` in place: only the nodes along
    /// `other`'s paths are visited (pruned as `difference` prunes them), nothing is copied.
    /// Removes `other`'s paths; whether anything was removed.
    pub fn subtract(&mut self, other: &Set) -> bool {
        let mut changed = self.member && other.member;
        self.member = self.member && !other.member;
        for (pe, theirs) in &other.children {
            if let Some(child) = self.children.get_mut(pe) {
                changed |= child.subtract(theirs);
            }
        }
        self.children.retain(|_, child| !child.is_empty());
        changed
    }

    pub fn intersection(&self, other: &Set) -> Set {
        let mut out = Set {
            member: self.member && other.member,
            children: BTreeMap::new(),
        };
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                out.children.insert(pe.clone(), child.intersection(theirs));
            }
        }
        out.prune()
    }

    /// Every node a member: `EnsureNamedFieldsAreMembers` for schemas whose objects are structs
    /// (a parent of a member path is itself part of the object), which is how prune compares
    /// objects.
    pub fn all_members(&self) -> Set {
        Set {
            member: true,
            children: self
                .children
                .iter()
                .map(|(pe, child)| (pe.clone(), child.all_members()))
                .collect(),
        }
    }

    /// Every member path, members of a node before its children's, in element order
    /// (`Set.Iterate`).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for (pe, child) in &self.children {
            if child.member {
                prefix.push(pe.clone());
                out.push(prefix.clone());
                prefix.pop();
            }
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The `fieldsV1` object: `.` marks a member that also has children.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.encode_children())
    }

    fn encode_children(&self) -> Map<String, Value> {
        let mut out = Map::with_capacity(self.children.len());
        self.encode_children_into(&mut out);
        out
    }

    /// Appends the encoded children to `out`; a child that is a member with children of its
    /// own gets its `.` first, written in place rather than by rebuilding its map.
    fn encode_children_into(&self, out: &mut Map<String, Value>) {
        for (pe, child) in &self.children {
            if child.is_empty() {
                continue;
            }
            let mut node = Map::with_capacity(child.children.len() + 1);
            if child.member && child.children.values().any(|c| !c.is_empty()) {
                node.insert(".".into(), Value::Object(Map::new()));
            }
            child.encode_children_into(&mut node);
            out.insert(pe.encode(), Value::Object(node));
        }
    }

    /// Parses `fieldsV1`; unknown keys are skipped (kube rejects them on write; stored sets
    /// are ours).
    pub fn from_fields_v1(fields: &Value) -> Set {
        let mut set = Set::default();
        if let Value::Object(map) = fields {
            for (key, child) in map {
                if key == "." {
                    continue;
                }
                let Some(pe) = PathElement::decode(key) else {
                    continue;
                };
                let mut node = Set::from_fields_v1(child);
                let is_leaf = child.as_object().is_none_or(|m| m.is_empty());
                node.member = is_leaf || child.get(".").is_some();
                set.children.insert(pe, node);
            }
        }
        set
    }
}
