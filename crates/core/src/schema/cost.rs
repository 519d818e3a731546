//! Static bound on the work of validating against a schema, so a schema whose
//! validation explodes (`anyOf` of two `$ref`s to the next level, twenty levels
//! deep: 2^20 checks of one value) is rejected before it is compiled.
//!
//! The bound is on subschema applications at one instance location (one value
//! of the arguments): the schema applied there, everything it applies in place
//! (`allOf`/`anyOf`/`oneOf`/`not`/`if`/`then`/`else`/`$ref`/`$dynamicRef`/
//! `dependentSchemas`...), counted with multiplicity (an `anyOf` of two refs
//! to one node applies that node twice), and, for a nested value, the sum
//! over every schema applied at its parent of the subschemas that can apply to
//! one child (`properties` of one key plus every `patternProperties`, or
//! `additionalProperties`; `items`; `contains`...). The analysis walks the
//! schema as a graph (nodes are schema objects, edges are applicators with
//! `$ref`s resolved), once per node and edge and a bounded number of rounds,
//! without recursion.
//!
//! - A `$ref` cycle that stays at one location (`{"$ref": "#"}`, or
//!   `anyOf: [{"$ref": "#"}]`) never terminates: rejected.
//! - A cycle through a nested value (a tree: `properties.children.items:
//!   {"$ref": "#"}`) is fine as long as it does not multiply per level; the
//!   bound then covers every depth arguments may have (`MAX_JSON_DEPTH`).
//! - `$ref`s are resolved like the validator would, but where the resolution
//!   depends on base URIs (`$id` inside the schema) every candidate counts, so
//!   the bound stays an upper bound. A reference the analysis cannot follow
//!   (not in the document, not a bundled meta-schema) is rejected: the
//!   validator works offline, so it could not follow it either.
//!
//! The total work of one validation is then at most this bound times the
//! number of values in the arguments ([`super::CompiledSchema::validate`]
//! refuses arguments above [`MAX_VALIDATION_CHECKS`] of it).

use foldhash::{HashMap, HashMapExt};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde_json::{Map, Value};

use super::refs::resolve_local;
use crate::limits::{MAX_JSON_DEPTH, MAX_SCHEMA_CHECKS_PER_VALUE, MAX_VALIDATION_CHECKS};

/// Values above this are reported as "more than"; sums saturate here.
const SATURATED: u64 = 1 << 40;
/// Edges (applicator children, resolved `$ref` candidates) analysed per
/// schema; a schema needing more is rejected rather than analysed slowly.
const MAX_EDGES: usize = 200_000;
/// Bound charged for a `$ref` to a JSON Schema meta-schema (bundled with the
/// validator, validates a schema-shaped argument with a few checks per value).
const META_SCHEMA_CHECKS: u64 = 64;

/// What the analysis found: the bound, and the size of the work it implies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaCost {
    /// Most subschema applications at any one value of the arguments.
    pub checks_per_value: u64,
}

impl SchemaCost {
    /// How many values (JSON nodes) arguments may have for one validation to
    /// stay within [`MAX_VALIDATION_CHECKS`].
    pub fn max_argument_values(&self) -> u64 {
        MAX_VALIDATION_CHECKS / self.checks_per_value.max(1)
    }
}

/// Why a schema is rejected; the reason is a phrase without a trailing period
/// (for "Invalid input schema: ...").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CostError {
    /// Validation could explode or never terminate: the catalog excludes the tool.
    TooExpensive(String),
    /// A `$ref` the analysis cannot follow. The offline validator cannot
    /// follow it either, so compiling fails anyway (INVALID_SCHEMA when the
    /// tool is validated); the catalog keeps the tool, as for any schema
    /// that does not compile.
    Unfollowable(String),
}

impl CostError {
    pub fn reason(&self) -> &str {
        match self {
            CostError::TooExpensive(reason) | CostError::Unfollowable(reason) => reason,
        }
    }
}

/// Bounds the validation work of `schema`, or says why it is rejected.
pub fn schema_cost(schema: &Value) -> Result<SchemaCost, CostError> {
    let graph = Graph::build(schema)?;
    let order = graph.in_place_order().ok_or_else(|| {
        CostError::TooExpensive(
            "a $ref cycle never reaches a nested value (validation would not terminate)".into(),
        )
    })?;
    let checks = graph.bound(&order);
    if checks > MAX_SCHEMA_CHECKS_PER_VALUE {
        let amount = if checks >= SATURATED {
            format!("more than {SATURATED}")
        } else {
            checks.to_string()
        };
        return Err(CostError::TooExpensive(format!(
            "too expensive to validate: up to {amount} subschema checks per value \
             (limit {MAX_SCHEMA_CHECKS_PER_VALUE}); reduce the $ref / anyOf / allOf fan-out"
        )));
    }
    Ok(SchemaCost {
        checks_per_value: checks.max(1),
    })
}

/// Keywords that make a schema a graph rather than a tree.
const REFERENCE_KEYWORDS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// Whether `schema` is within the bound without the graph analysis: no
/// reference keyword anywhere, so its applicators form a tree and no value
/// gets one subschema twice, and at most [`MAX_SCHEMA_CHECKS_PER_VALUE`]
/// values in all, which bounds the subschemas applied at any one value.
/// (Most tools' schemas; a catalog checks thousands.)
pub fn within_bound_as_a_tree(schema: &Value) -> bool {
    let mut values = 0u64;
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        values += 1;
        if values > MAX_SCHEMA_CHECKS_PER_VALUE {
            return false;
        }
        match value {
            Value::Object(map) => {
                if REFERENCE_KEYWORDS.iter().any(|k| map.contains_key(*k)) {
                    return false;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items.iter()),
            _ => {}
        }
    }
    true
}

/// A child the validator may apply: a schema node, or an opaque bounded cost.
#[derive(Clone, Copy)]
enum Target {
    Node(usize),
    Opaque(u64),
}

/// Where a reference lands: a value of the document, or a bundled meta-schema.
enum Landing<'a> {
    Value(&'a Value),
    MetaSchema,
}

/// Applicators of one schema node, children resolved to node ids.
#[derive(Default)]
struct Node {
    /// Applied at the same value, with multiplicity.
    in_place: Vec<Target>,
    /// `properties` values: one applies to a given key.
    properties: Vec<usize>,
    /// `patternProperties` values: any number apply to a given key.
    patterns: Vec<usize>,
    /// `additionalProperties`: applies when no property or pattern does.
    additional: Vec<usize>,
    /// `unevaluatedProperties`: may apply to any key.
    every_property: Vec<usize>,
    /// `prefixItems` / array-form `items`: one applies to a given index.
    prefix: Vec<usize>,
    /// Object-form `items` / `additionalItems`: apply past the prefix.
    rest: Vec<usize>,
    /// `contains` / `unevaluatedItems`: may apply to any item.
    every_item: Vec<usize>,
    /// Other nested locations, one at a time: `propertyNames` (the keys),
    /// `contentSchema` (decoded content).
    elsewhere: Vec<usize>,
}

struct Graph<'a> {
    values: Vec<&'a Value>,
    nodes: Vec<Node>,
}

/// Where references can land, collected from the whole document (a `$defs`
/// entry is only reached through a reference, so it cannot be collected on
/// the way).
struct Landmarks<'a> {
    /// The document root and every object with a non-fragment `$id` / `id`:
    /// the bases a `#/pointer` may be relative to.
    resources: Vec<(&'a Value, Option<&'a str>)>,
    /// `$anchor` / `$dynamicAnchor` / fragment `$id` names.
    anchors: HashMap<&'a str, Vec<&'a Value>>,
    /// Objects with `$recursiveAnchor: true`.
    recursive_anchors: Vec<&'a Value>,
}

impl<'a> Landmarks<'a> {
    fn collect(root: &'a Value) -> Landmarks<'a> {
        let mut landmarks = Landmarks {
            resources: vec![(root, None)],
            anchors: HashMap::new(),
            recursive_anchors: Vec::new(),
        };
        let mut stack = vec![root];
        while let Some(value) = stack.pop() {
            match value {
                Value::Object(map) => {
                    for key in ["$id", "id"] {
                        match map.get(key).and_then(Value::as_str) {
                            Some(id) if id.starts_with('#') => {
                                landmarks.anchors.entry(&id[1..]).or_default().push(value)
                            }
                            Some(id) if !std::ptr::eq(value, root) => {
                                landmarks.resources.push((value, Some(id)))
                            }
                            _ => {}
                        }
                    }
                    for key in ["$anchor", "$dynamicAnchor"] {
                        if let Some(name) = map.get(key).and_then(Value::as_str) {
                            landmarks.anchors.entry(name).or_default().push(value);
                        }
                    }
                    if map.get("$recursiveAnchor") == Some(&Value::Bool(true)) {
                        landmarks.recursive_anchors.push(value);
                    }
                    stack.extend(map.values());
                }
                Value::Array(items) => stack.extend(items.iter()),
                _ => {}
            }
        }
        if let Some(id) = root
            .get("$id")
            .or_else(|| root.get("id"))
            .and_then(Value::as_str)
        {
            landmarks.resources[0].1 = Some(id);
        }
        landmarks
    }

    /// Every value `reference` may resolve to (all candidates when base URIs
    /// make it ambiguous), or None when it cannot be followed at all.
    fn resolve(&self, reference: &str) -> Option<Vec<Landing<'a>>> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let bases: Vec<&'a Value> = if base.is_empty() {
            self.resources.iter().map(|(value, _)| *value).collect()
        } else {
            let wanted = base.trim_end_matches('/');
            let matching: Vec<&'a Value> = self
                .resources
                .iter()
                .filter(|(_, id)| id.is_some_and(|id| same_resource(id, wanted)))
                .map(|(value, _)| *value)
                .collect();
            if matching.is_empty() {
                // The validator bundles the meta-schemas; nothing else is
                // reachable offline.
                return is_meta_schema(base).then(|| vec![Landing::MetaSchema]);
            }
            matching
        };
        let found: Vec<Landing<'a>> =
            if fragment.is_empty() || fragment.starts_with('/') || fragment.starts_with('%') {
                let pointer = format!("#{fragment}");
                bases
                    .iter()
                    .filter_map(|base| resolve_local(base, &pointer))
                    .map(Landing::Value)
                    .collect()
            } else {
                self.anchors
                    .get(fragment)
                    .map(|v| v.iter().copied().map(Landing::Value).collect())
                    .unwrap_or_default()
            };
        (!found.is_empty()).then_some(found)
    }
}

/// Whether `$id` `id` names the resource `wanted` (an absolute URI or a path
/// relative to some base): equal, or one ends with the other at a `/`.
fn same_resource(id: &str, wanted: &str) -> bool {
    let id = id.trim_end_matches('#').trim_end_matches('/');
    id == wanted
        || id
            .strip_suffix(wanted)
            .is_some_and(|head| head.ends_with('/'))
        || wanted
            .strip_suffix(id)
            .is_some_and(|head| head.ends_with('/'))
}

fn is_meta_schema(base: &str) -> bool {
    let rest = base
        .strip_prefix("https://")
        .or_else(|| base.strip_prefix("http://"));
    rest.is_some_and(|rest| rest.starts_with("json-schema.org/"))
}

impl<'a> Graph<'a> {
    /// Nodes reachable from `root` through applicators and references.
    fn build(root: &'a Value) -> Result<Graph<'a>, CostError> {
        let landmarks = Landmarks::collect(root);
        let mut graph = Graph {
            values: vec![root],
            nodes: Vec::new(),
        };
        let mut ids: HashMap<usize, usize> = HashMap::new();
        ids.insert(root as *const Value as usize, 0);
        let mut edges = 0usize;
        let mut next = 0;
        while next < graph.values.len() {
            let value = graph.values[next];
            next += 1;
            let mut node = Node::default();
            if let Value::Object(map) = value {
                let mut id_of = |child: &'a Value| -> usize {
                    *ids.entry(child as *const Value as usize)
                        .or_insert_with(|| {
                            graph.values.push(child);
                            graph.values.len() - 1
                        })
                };
                describe(map, &landmarks, &mut node, &mut id_of, &mut edges)?;
            }
            if edges > MAX_EDGES {
                return Err(CostError::TooExpensive(format!(
                    "too complex to analyse (more than {MAX_EDGES} applicator links)"
                )));
            }
            graph.nodes.push(node);
        }
        Ok(graph)
    }

    /// Nodes ordered so that every in-place child comes before its parent,
    /// and otherwise close to a post-order of all applicators (so one round
    /// of [`Graph::bound`] settles a schema without recursion); None when
    /// in-place applicators form a cycle.
    fn in_place_order(&self) -> Option<Vec<usize>> {
        let count = self.nodes.len();
        let post = self.post_order();
        let mut rank = vec![0usize; count];
        for (position, &node) in post.iter().enumerate() {
            rank[node] = position;
        }
        let mut pending = vec![0usize; count];
        let mut parents: Vec<Vec<usize>> = vec![Vec::new(); count];
        for (parent, node) in self.nodes.iter().enumerate() {
            for target in &node.in_place {
                if let Target::Node(child) = *target {
                    pending[parent] += 1;
                    parents[child].push(parent);
                }
            }
        }
        let mut ready: BinaryHeap<Reverse<(usize, usize)>> = (0..count)
            .filter(|&n| pending[n] == 0)
            .map(|n| Reverse((rank[n], n)))
            .collect();
        let mut order = Vec::with_capacity(count);
        while let Some(Reverse((_, node))) = ready.pop() {
            order.push(node);
            for &parent in &parents[node] {
                pending[parent] -= 1;
                if pending[parent] == 0 {
                    ready.push(Reverse((rank[parent], parent)));
                }
            }
        }
        (order.len() == count).then_some(order)
    }

    /// Iterative depth-first post-order over every applicator edge.
    fn post_order(&self) -> Vec<usize> {
        let mut seen = vec![false; self.nodes.len()];
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<(usize, std::vec::IntoIter<usize>)> = Vec::new();
        for start in 0..self.nodes.len() {
            if seen[start] {
                continue;
            }
            seen[start] = true;
            stack.push((start, self.nodes[start].children().into_iter()));
            while let Some((node, children)) = stack.last_mut() {
                match children.next() {
                    Some(child) if !seen[child] => {
                        seen[child] = true;
                        let grandchildren = self.nodes[child].children().into_iter();
                        stack.push((child, grandchildren));
                    }
                    Some(_) => {}
                    None => {
                        order.push(*node);
                        stack.pop();
                    }
                }
            }
        }
        order
    }

    /// The bound on subschema applications at one value, for the root.
    ///
    /// Per node: `here` = applications at the value it is applied to (itself
    /// plus its in-place children's), `nested` = applications at one nested
    /// value, `bound` = max of the two. Nested bounds are iterated from the
    /// in-place ones, one more level of nesting per round, until nothing
    /// changes or every depth arguments can have is covered.
    fn bound(&self, order: &[usize]) -> u64 {
        let count = self.nodes.len();
        let mut here = vec![0u64; count];
        for &n in order {
            here[n] = self.nodes[n]
                .in_place
                .iter()
                .fold(1u64, |sum, t| add(sum, target_here(&here, *t)));
        }
        let mut bound = here.clone();
        let mut nested = vec![0u64; count];
        for _round in 0..=MAX_JSON_DEPTH + 1 {
            let mut changed = false;
            for &n in order {
                let node = &self.nodes[n];
                let own = node.one_nested_value(&bound);
                let total = node.in_place.iter().fold(own, |sum, t| {
                    add(
                        sum,
                        match *t {
                            Target::Node(child) => nested[child],
                            Target::Opaque(checks) => checks,
                        },
                    )
                });
                if total != nested[n] {
                    nested[n] = total;
                    changed = true;
                }
                bound[n] = bound[n].max(total);
            }
            if !changed || bound[0] > MAX_SCHEMA_CHECKS_PER_VALUE {
                break;
            }
        }
        bound[0]
    }
}

fn target_here(here: &[u64], target: Target) -> u64 {
    match target {
        Target::Node(child) => here[child],
        Target::Opaque(checks) => checks,
    }
}

fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(SATURATED)
}

fn sum(ids: &[usize], bound: &[u64]) -> u64 {
    ids.iter().fold(0, |total, &id| add(total, bound[id]))
}

fn max(ids: &[usize], bound: &[u64]) -> u64 {
    ids.iter().map(|&id| bound[id]).max().unwrap_or(0)
}

impl Node {
    fn children(&self) -> Vec<usize> {
        let in_place = self.in_place.iter().filter_map(|t| match *t {
            Target::Node(id) => Some(id),
            Target::Opaque(_) => None,
        });
        in_place
            .chain(self.properties.iter().copied())
            .chain(self.patterns.iter().copied())
            .chain(self.additional.iter().copied())
            .chain(self.every_property.iter().copied())
            .chain(self.prefix.iter().copied())
            .chain(self.rest.iter().copied())
            .chain(self.every_item.iter().copied())
            .chain(self.elsewhere.iter().copied())
            .collect()
    }

    /// Applications this node's own applicators cause at one nested value,
    /// the worst key or index, given the bounds of its children.
    fn one_nested_value(&self, bound: &[u64]) -> u64 {
        let matched_key = add(max(&self.properties, bound), sum(&self.patterns, bound));
        let property = add(
            matched_key.max(sum(&self.additional, bound)),
            sum(&self.every_property, bound),
        );
        let item = add(
            max(&self.prefix, bound).max(sum(&self.rest, bound)),
            sum(&self.every_item, bound),
        );
        property.max(item).max(max(&self.elsewhere, bound))
    }
}

/// Fills `node` with the applicators of the schema object `map`.
fn describe<'a>(
    map: &'a Map<String, Value>,
    landmarks: &Landmarks<'a>,
    node: &mut Node,
    id_of: &mut dyn FnMut(&'a Value) -> usize,
    edges: &mut usize,
) -> Result<(), CostError> {
    let is_schema = |v: &Value| v.is_object() || v.is_boolean();
    let single =
        |key: &str, id_of: &mut dyn FnMut(&'a Value) -> usize, edges: &mut usize| -> Vec<usize> {
            match map.get(key) {
                Some(v) if is_schema(v) => {
                    *edges += 1;
                    vec![id_of(v)]
                }
                _ => Vec::new(),
            }
        };
    let each = |values: Box<dyn Iterator<Item = &'a Value> + 'a>,
                id_of: &mut dyn FnMut(&'a Value) -> usize,
                edges: &mut usize|
     -> Vec<usize> {
        values
            .filter(|v| is_schema(v))
            .map(|v| {
                *edges += 1;
                id_of(v)
            })
            .collect()
    };
    let array = |key: &str| -> Box<dyn Iterator<Item = &'a Value> + 'a> {
        match map.get(key) {
            Some(Value::Array(items)) => Box::new(items.iter()),
            _ => Box::new(std::iter::empty()),
        }
    };
    let values = |key: &str| -> Box<dyn Iterator<Item = &'a Value> + 'a> {
        match map.get(key) {
            Some(Value::Object(children)) => Box::new(children.values()),
            _ => Box::new(std::iter::empty()),
        }
    };

    let mut in_place: Vec<usize> = Vec::new();
    for key in ["allOf", "anyOf", "oneOf"] {
        in_place.extend(each(array(key), id_of, edges));
    }
    for key in ["not", "if", "then", "else"] {
        in_place.extend(single(key, id_of, edges));
    }
    for key in ["dependentSchemas", "dependencies"] {
        in_place.extend(each(values(key), id_of, edges));
    }
    node.in_place = in_place.into_iter().map(Target::Node).collect();

    for key in ["$ref", "$dynamicRef"] {
        if let Some(reference) = map.get(key).and_then(Value::as_str) {
            let targets = landmarks.resolve(reference).ok_or_else(|| {
                CostError::Unfollowable(format!(
                    "$ref {} cannot be followed offline",
                    super::quote::quote_str(reference)
                ))
            })?;
            // The validator drops a reference to the schema object holding
            // it (`{"$ref": "#"}` at the root constrains nothing).
            let targets = targets
                .into_iter()
                .filter(|t| !matches!(t, Landing::Value(Value::Object(m)) if std::ptr::eq(m, map)));
            push_targets(node, targets.collect(), id_of, edges);
        }
    }
    if map.get("$recursiveRef").and_then(Value::as_str).is_some() {
        // Resolves to the root or, dynamically, to a `$recursiveAnchor` resource: count all.
        let mut targets = vec![Landing::Value(landmarks.resources[0].0)];
        targets.extend(
            landmarks
                .recursive_anchors
                .iter()
                .copied()
                .map(Landing::Value),
        );
        push_targets(node, targets, id_of, edges);
    }

    node.properties = each(values("properties"), id_of, edges);
    node.patterns = each(values("patternProperties"), id_of, edges);
    node.additional = single("additionalProperties", id_of, edges);
    node.every_property = single("unevaluatedProperties", id_of, edges);
    node.prefix = each(array("prefixItems"), id_of, edges);
    match map.get("items") {
        Some(Value::Array(_)) => node.prefix.extend(each(array("items"), id_of, edges)),
        _ => node.rest = single("items", id_of, edges),
    }
    node.rest.extend(single("additionalItems", id_of, edges));
    node.every_item = single("contains", id_of, edges);
    node.every_item
        .extend(single("unevaluatedItems", id_of, edges));
    node.elsewhere = single("propertyNames", id_of, edges);
    node.elsewhere.extend(single("contentSchema", id_of, edges));
    Ok(())
}

/// Adds resolved reference targets as in-place children.
fn push_targets<'a>(
    node: &mut Node,
    targets: Vec<Landing<'a>>,
    id_of: &mut dyn FnMut(&'a Value) -> usize,
    edges: &mut usize,
) {
    for target in targets {
        *edges += 1;
        node.in_place.push(match target {
            Landing::Value(value) => Target::Node(id_of(value)),
            Landing::MetaSchema => Target::Opaque(META_SCHEMA_CHECKS),
        });
    }
}
