//! What the model sees: the mode's surface (memoized per format), and the
//! capability directory of code and tools modes.

use std::collections::HashMap;
use std::sync::Arc;

use super::events::SessionEvent;
use super::stats::SurfaceRecord;
use super::{control_set, direct_mode_name, Session};
use crate::catalog::{SearchOptions, Source, ToolEntry};
use crate::config::Mode;
use crate::surfaces::{
    capability_budget, control_tools, directory_text, entry_definition, is_listable_identifier,
    render_capabilities, DirectoryGuidance, ModelSurface, OwnerLine, SurfaceBytes, SurfaceFormat,
    ToolDefinition,
};

impl Session {
    /// The tools (and directory text) to send in `format`. Same session, same
    /// format: the same memoized surface. Every call is recorded as a render.
    pub fn surface(&self, format: SurfaceFormat) -> Arc<ModelSurface> {
        self.surface_for(format, None)
    }

    /// [`Session::surface`] for a turn: with the capability directory on and
    /// the turn's user prompt given, the directory lists the owners that
    /// prompt most likely needs first (the tools stay the memoized ones).
    pub fn surface_for(&self, format: SurfaceFormat, prompt: Option<&str>) -> Arc<ModelSurface> {
        let memo = self.inner.surfaces[format.index()]
            .get_or_init(|| Arc::new(self.build_surface(format)))
            .clone();
        let surface = match prompt.filter(|_| self.capability_directory_enabled()) {
            Some(prompt) => {
                let directory_prompt = self.capability_directory(Some(prompt));
                let bytes = SurfaceBytes {
                    tools: memo.bytes.tools,
                    directory_prompt: directory_prompt.as_deref().map_or(0, str::len),
                };
                Arc::new(ModelSurface {
                    format,
                    tools: memo.tools.clone(),
                    directory_prompt,
                    bytes,
                })
            }
            None => memo,
        };
        let catalog_schemas = self.catalog_schema_count();
        let record = SurfaceRecord {
            format: format.as_str().to_string(),
            tools: surface.tools.len(),
            catalog_schemas,
            tool_bytes: surface.bytes.tools,
            directory_prompt_bytes: surface.bytes.directory_prompt,
        };
        self.with_stats(|s| {
            s.surfaces_rendered += 1;
            s.bytes.tools += surface.bytes.tools as u64;
            s.bytes.directory_prompt += surface.bytes.directory_prompt as u64;
            s.last_surface = Some(record);
        });
        self.emit(SessionEvent::Surface {
            format: format.as_str().to_string(),
            mode: self.mode().as_str().to_string(),
            tools: surface.tools.len(),
            catalog_schemas,
            tool_bytes: surface.bytes.tools,
            directory_prompt_bytes: surface.bytes.directory_prompt,
        });
        surface
    }

    /// The prompt text of the mode: the directory (directory mode), the
    /// capability directory without a request's order (code and tools modes,
    /// when enabled), else none.
    pub fn directory_prompt(&self) -> Option<Arc<str>> {
        if self.capability_directory_enabled() {
            return self.capability_directory(None);
        }
        let options = self.inner.directory.as_ref()?;
        let catalog = &self.inner.catalog;
        Some(directory_text(
            catalog.fingerprint(),
            || catalog.entries_by_name(),
            options,
        ))
    }

    fn build_surface(&self, format: SurfaceFormat) -> ModelSurface {
        let definitions = self.surface_definitions();
        ModelSurface::new(format, &definitions, self.directory_prompt())
    }

    /// Neutral definitions in surface order: control tools, direct tools,
    /// then catalog tools the mode shows with their schema.
    pub fn surface_definitions(&self) -> Vec<ToolDefinition> {
        let inner = &self.inner;
        let mut defs = control_tools(control_set(self.mode()), &inner.control);
        defs.extend(inner.direct_tools.iter().cloned());
        defs.extend(
            self.visible_catalog_tools()
                .map(|(e, name)| entry_definition(e, name)),
        );
        defs
    }

    /// Catalog tools shown with their schema: all (direct mode), none
    /// otherwise (directory mode shows client tools as direct tools).
    fn visible_catalog_tools(&self) -> Box<dyn Iterator<Item = (&ToolEntry, String)> + '_> {
        let inner = &self.inner;
        match self.mode() {
            Mode::Direct => Box::new(inner.catalog.ordinals().filter_map(move |(o, e)| {
                let name = direct_mode_name(e);
                (inner.direct_mode_names.get(&name) == Some(&o)).then_some((e, name))
            })),
            Mode::Directory | Mode::Code | Mode::Tools => Box::new(std::iter::empty()),
        }
    }

    fn catalog_schema_count(&self) -> usize {
        self.visible_catalog_tools().count()
    }
}

/// One owner's deferred tools, for the capability directory: built once per
/// session (the catalog does not change under it).
#[derive(Debug)]
pub(super) struct OwnerGroup {
    source: Source,
    owner: String,
    /// The owner's deferred tools.
    tools: usize,
    /// Trusted owners: the tools a call by name reaches (listable, held by
    /// one tool), in name order; empty for untrusted owners.
    names: Vec<(usize, String)>,
}

/// Hits read from the request to order the capability directory.
const CAPABILITY_REQUEST_HITS: usize = 20;

impl Session {
    /// Whether code and tools modes show the capability directory.
    pub fn capability_directory_enabled(&self) -> bool {
        matches!(self.mode(), Mode::Code | Mode::Tools) && self.inner.capability_directory
    }

    /// The capability directory (code and tools modes, when enabled): owners
    /// and their capability lines. Without `prompt`, owners by size (the text
    /// is the same every turn, so a provider's prompt cache keeps it); with
    /// the turn's user prompt, the owners its best matches belong to come
    /// first, and in their lines the matching tools.
    pub fn capability_directory(&self, prompt: Option<&str>) -> Option<Arc<str>> {
        if !self.capability_directory_enabled() {
            return None;
        }
        let groups = self.inner.owner_groups.get_or_init(|| self.owner_groups());
        let guidance = if self.mode() == Mode::Code {
            DirectoryGuidance::Code
        } else {
            DirectoryGuidance::Structured
        };
        let budget = capability_budget(self.inner.context_tokens);
        let Some(prompt) = prompt else {
            return self
                .inner
                .capability_text
                .get_or_init(|| {
                    let lines: Vec<OwnerLine> = groups
                        .iter()
                        .map(|g| owner_line(g, &[], |a, b| self.name_cmp(a, b)))
                        .collect();
                    render_capabilities(&lines, budget, guidance).map(Arc::from)
                })
                .clone();
        };
        let hits = self.request_hits(prompt);
        // Each owner's place: its best hit's rank; owners without one keep the size order.
        let data = self.catalog().data();
        let mut best: HashMap<(Source, &str), usize> = HashMap::new();
        let mut promoted: HashMap<(Source, &str), Vec<usize>> = HashMap::new();
        for (rank, &o) in hits.iter().enumerate() {
            let e = &data.entries[o];
            best.entry((e.source, e.owner.as_str())).or_insert(rank);
            promoted
                .entry((e.source, e.owner.as_str()))
                .or_default()
                .push(o);
        }
        let mut order: Vec<(usize, &OwnerGroup)> = groups
            .iter()
            .map(|g| {
                (
                    best.get(&(g.source, g.owner.as_str()))
                        .copied()
                        .unwrap_or(usize::MAX),
                    g,
                )
            })
            .collect();
        order.sort_by_key(|(rank, _)| *rank);
        let lines: Vec<OwnerLine> = order
            .iter()
            .map(|(_, g)| {
                let hit = promoted
                    .get(&(g.source, g.owner.as_str()))
                    .map_or(&[][..], Vec::as_slice);
                owner_line(g, hit, |a, b| self.name_cmp(a, b))
            })
            .collect();
        render_capabilities(&lines, budget, guidance).map(Arc::from)
    }

    /// The catalog's ordinals the turn's request points at: tools it names,
    /// then its best search matches.
    fn request_hits(&self, prompt: &str) -> Vec<usize> {
        let catalog = self.catalog();
        let lookup = |token: &str| catalog.exact_match(token, |_| true).one();
        let reading = super::hydrate::read_prompt(prompt, lookup);
        let mut hits: Vec<usize> = reading
            .mentioned
            .into_iter()
            .filter(|&o| catalog.is_allowed(o))
            .collect();
        if !reading.request.trim().is_empty() {
            for o in catalog
                .search(
                    &reading.request,
                    &SearchOptions::ordinals(CAPABILITY_REQUEST_HITS).lexical_only(),
                )
                .unwrap_or_default()
            {
                if !hits.contains(&o) {
                    hits.push(o);
                }
            }
        }
        hits
    }

    /// Directory order (name, owner, id) of two ordinals.
    fn name_cmp(&self, a: usize, b: usize) -> std::cmp::Ordering {
        let data = self.catalog().data();
        crate::surfaces::directory_order(&data.entries[a], &data.entries[b])
    }

    /// Deferred tools grouped by owner, largest owners first (then source,
    /// then owner name): tools shown with a schema are not listed.
    fn owner_groups(&self) -> Vec<OwnerGroup> {
        let catalog = self.catalog();
        let data = catalog.data();
        let mut groups: Vec<OwnerGroup> = Vec::new();
        let mut index: HashMap<(Source, &str), usize> = HashMap::new();
        for o in data
            .name_order
            .iter()
            .map(|&o| o as usize)
            .filter(|&o| catalog.is_allowed(o))
        {
            let e = &data.entries[o];
            if self.inner.direct_names.contains(&e.name) {
                continue;
            }
            let slot = *index
                .entry((e.source, e.owner.as_str()))
                .or_insert_with(|| {
                    groups.push(OwnerGroup {
                        source: e.source,
                        owner: e.owner.clone(),
                        tools: 0,
                        names: Vec::new(),
                    });
                    groups.len() - 1
                });
            let group = &mut groups[slot];
            group.tools += 1;
            if e.is_trusted()
                && is_listable_identifier(&e.name)
                && self.exact_name_ordinals(&e.name).take(2).count() == 1
            {
                group.names.push((o, e.name.clone()));
            }
        }
        let source_rank = |s: Source| match s {
            Source::Openclaw => 0,
            Source::Mcp => 1,
            Source::Client => 2,
        };
        groups.sort_by(|a, b| {
            b.tools
                .cmp(&a.tools)
                .then(source_rank(a.source).cmp(&source_rank(b.source)))
                .then(a.owner.cmp(&b.owner))
        });
        groups
    }
}

/// Names a line can show at most (160 bytes of one-letter names); more are never rendered.
const LINE_NAMES_MAX: usize = 80;

/// A group's line: the names of the request's hits in this group first (in
/// hit order), then the rest by name; `cmp` is the catalog's name order.
fn owner_line<'g>(
    group: &'g OwnerGroup,
    hits: &[usize],
    cmp: impl Fn(usize, usize) -> std::cmp::Ordering,
) -> OwnerLine<'g> {
    let mut names: Vec<&str> = Vec::with_capacity(group.names.len().min(LINE_NAMES_MAX));
    for &h in hits {
        // `names` is in name order: a binary search finds a hit's name.
        if let Ok(i) = group.names.binary_search_by(|(o, _)| cmp(*o, h)) {
            names.push(&group.names[i].1);
        }
    }
    let promoted = names.len();
    for (_, name) in &group.names {
        if names.len() >= LINE_NAMES_MAX {
            break;
        }
        if !names[..promoted].contains(&name.as_str()) {
            names.push(name);
        }
    }
    OwnerLine {
        source: group.source,
        owner: &group.owner,
        tools: group.tools,
        names,
    }
}
