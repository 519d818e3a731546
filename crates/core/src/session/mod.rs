//! Session: one run's view of Tool Search. It renders the mode's surface,
//! answers the control tools (`tool_search`, `tool_describe`, `tool_call`,
//! `tool_search_code`) and, in direct and directory modes, direct calls of
//! exact catalog tool names; it sends calls to the gateway's [`Executor`],
//! fails closed, and keeps telemetry and an event stream.
//!
//! - [`args`]: model argument parsing and repair.
//! - [`dispatch`]: `handle`, and the primitives code mode uses
//!   (`search_json`, `describe_json`, `call`).
//! - [`cancel`], [`executor`]: the async boundary (std futures only; the
//!   binding supplies the runtime).
//! - [`events`], [`stats`]: session log and telemetry.

pub mod args;
pub mod cancel;
pub mod direct;
mod dispatch;
pub mod events;
pub mod executor;
mod hydrate;
pub mod js_options;
pub mod result;
pub mod stats;
mod surface;

#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub use cancel::{until_cancelled, CancelSignal};
pub use dispatch::{CallContext, HandleOptions};
pub use events::{EventSink, Outcome, SessionEvent, ToolRef};
pub use executor::{
    offloaded, BoxFuture, CodeContext, CodeRunner, Executor, ExecutorCall, ExecutorOutcome,
    Offload, OffloadHandle,
};
pub use hydrate::HydrateOptions;
pub use js_options::{HandleArgs, SessionArgs, SurfaceArgs};
pub use result::{Failure, ResultError, ResultStatus, ToolResult};
pub use stats::SessionTelemetry;

use crate::catalog::{Catalog, SearchLimits, Source};
use crate::config::{Mode, ResolvedConfig};
use crate::error::{Error, ErrorCode, Result};
use crate::surfaces::control::{TOOL_CALL, TOOL_DESCRIBE, TOOL_SEARCH, TOOL_SEARCH_CODE};
use crate::surfaces::{
    directory_budget, ControlSet, ControlSettings, DirectoryGuidance, DirectoryOptions,
    ModelSurface, ToolDefinition, CONTROL_TOOL_NAMES,
};

/// Everything besides the catalog and config a session is built with.
#[derive(Default)]
pub struct SessionOptions {
    /// Direct-only and policy-required tools that stay visible in every mode.
    /// The catalog's own direct-only tools are added after these (by name,
    /// without duplicates), then its core coding tools in tools and directory
    /// modes (`CatalogOptions.core_tools`) and, in direct mode, its tools named
    /// like control tools.
    pub direct_tools: Vec<ToolDefinition>,
    /// The model's context size; scales the directory budget.
    pub context_tokens: Option<u64>,
    pub on_event: Option<EventSink>,
    /// Runs `tool_search_code` cells; without one, code cells fail with
    /// CODE_MODE_UNAVAILABLE.
    pub code_runner: Option<Arc<dyn CodeRunner>>,
    /// Code and tools modes: add the capability directory (owners and their
    /// tools, surfaces::capabilities) to the surface. `None`:
    /// [`CAPABILITY_DIRECTORY_DEFAULT`].
    pub capability_directory: Option<bool>,
}

/// Whether code and tools modes show the capability directory unless a
/// gateway says otherwise. Off: on the QA lanes it cost more request bytes
/// than the turns it saved (README, "Capability directory").
pub const CAPABILITY_DIRECTORY_DEFAULT: bool = false;

/// Cheap to clone: clones share state, telemetry and the event sink.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    catalog: Catalog,
    config: ResolvedConfig,
    control: ControlSettings,
    executor: Arc<dyn Executor>,
    /// Fixed at construction (`with_catalog` carries it over).
    code_runner: Option<Arc<dyn CodeRunner>>,
    on_event: Option<EventSink>,
    direct_tools: Vec<ToolDefinition>,
    direct_names: BTreeSet<String>,
    /// Direct mode: the function name each visible catalog tool has (MCP tools
    /// use their `operation`), to ordinal.
    direct_mode_names: HashMap<String, usize>,
    directory: Option<DirectoryOptions>,
    /// One memoized surface per format (same snapshot, same bytes).
    surfaces: [OnceLock<Arc<ModelSurface>>; 4],
    /// Shared with the sessions `with_catalog` makes: one telemetry, one call counter.
    stats: Arc<Mutex<stats::Stats>>,
    next_call: Arc<AtomicU64>,
    /// The gateway's own direct tools and context size, for `with_catalog`.
    gateway_direct_tools: Vec<ToolDefinition>,
    context_tokens: Option<u64>,
    /// The capability directory (code and tools modes): on or off, the
    /// catalog's owners (built on first use), the request-free text.
    capability_directory: bool,
    owner_groups: OnceLock<Vec<surface::OwnerGroup>>,
    capability_text: OnceLock<Option<Arc<str>>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("mode", &self.inner.config.mode)
            .field("catalog", &self.inner.catalog)
            .finish()
    }
}

fn collision(message: String) -> Error {
    Error::new(ErrorCode::NameCollision, message)
}

impl Session {
    pub fn new(
        catalog: &Catalog,
        config: ResolvedConfig,
        executor: Arc<dyn Executor>,
        options: SessionOptions,
    ) -> Result<Session> {
        let mode = effective_mode(&config);
        let catalog = catalog.with_limits(SearchLimits {
            default_limit: config.search_default_limit,
            max_limit: config.max_search_limit,
        });
        let control = ControlSettings {
            search_default_limit: config.search_default_limit,
            max_search_limit: config.max_search_limit,
            code_timeout_ms: config.code_timeout_ms,
        };

        // Direct tools: the gateway's, then the catalog's direct-only ones,
        // then (by mode) core coding tools or control-named tools.
        let gateway_direct_tools = options.direct_tools.clone();
        let mut direct_tools = options.direct_tools;
        let mut direct_names = BTreeSet::new();
        for tool in &direct_tools {
            if !direct_names.insert(tool.name.clone()) {
                return Err(collision(format!(
                    "Two direct tools are named \"{}\"; tool names must be unique.",
                    tool.name
                )));
            }
        }
        // Tool Search off: a tool named like a control tool is an ordinary
        // tool, so the list passes through whole.
        let control_named = if mode == Mode::Direct {
            catalog.control_named()
        } else {
            &[]
        };
        for tool in catalog.direct_only().iter().chain(control_named) {
            match direct::definition_from_direct_only(tool) {
                Ok(def) if direct_names.insert(def.name.clone()) => direct_tools.push(def),
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(target: "tool_search::session", id = tool.id.as_str(), error = %e, "direct-only tool skipped")
                }
            }
        }
        // Core coding tools stay in front of the model (and in the catalog)
        // where the other tools are deferred; code mode shows only its tool.
        if matches!(mode, Mode::Tools | Mode::Directory) {
            for e in catalog.core_tools() {
                if direct_names.insert(e.name.clone()) {
                    direct_tools.push(ToolDefinition::new(
                        e.name.clone(),
                        e.description.clone(),
                        e.input_schema.as_deref(),
                    ));
                }
            }
        }
        if control_set(mode) != ControlSet::None {
            if let Some(name) = direct_names
                .iter()
                .find(|n| CONTROL_TOOL_NAMES.contains(&n.as_str()))
            {
                return Err(collision(format!(
                    "Direct tool \"{name}\" has the name of a Tool Search control tool."
                )));
            }
        }
        let mut catalog = catalog;
        if mode == Mode::Directory {
            check_client_collisions(&catalog)?;
            // Client tools are shown with their schema: they stay out of the
            // catalog (search, describe, tool_call, the directory), as in
            // OpenClaw, so the model meets each once. The gateway runs them
            // like its other direct tools.
            if catalog.entries().any(|e| e.source == Source::Client) {
                for e in catalog.entries().filter(|e| e.source == Source::Client) {
                    if direct_names.insert(e.name.clone()) {
                        direct_tools.push(ToolDefinition::new(
                            e.name.clone(),
                            e.description.clone(),
                            e.input_schema.as_deref(),
                        ));
                    }
                }
                let cataloged: Vec<&str> = catalog
                    .entries()
                    .filter(|e| e.source != Source::Client)
                    .map(|e| e.id.as_str())
                    .collect();
                catalog = catalog.restrict(&cataloged);
            }
        }

        let direct_mode_names = if mode == Mode::Direct {
            direct_mode_table(&catalog, &direct_names)
        } else {
            HashMap::new()
        };
        let directory = (mode == Mode::Directory).then(|| DirectoryOptions {
            budget_chars: directory_budget(options.context_tokens),
            guidance: DirectoryGuidance::Structured,
            visible_names: direct_names.clone(),
        });

        Ok(Session {
            inner: Arc::new(Inner {
                catalog,
                config,
                control,
                executor,
                code_runner: options.code_runner,
                on_event: options.on_event,
                direct_tools,
                direct_names,
                direct_mode_names,
                directory,
                surfaces: Default::default(),
                stats: Arc::new(Mutex::new(stats::Stats::default())),
                next_call: Arc::new(AtomicU64::new(1)),
                gateway_direct_tools,
                context_tokens: options.context_tokens,
                capability_directory: options
                    .capability_directory
                    .unwrap_or(CAPABILITY_DIRECTORY_DEFAULT),
                owner_groups: OnceLock::new(),
                capability_text: OnceLock::new(),
            }),
        })
    }

    /// This session moved to `catalog` (e.g. after `Catalog::with_source`):
    /// same config, executor, code runner, event sink, telemetry and call
    /// numbering. The model surfaces are kept (same bytes) when the mode's
    /// surface does not depend on the catalog: code and tools modes whose
    /// direct tools did not change. Calls in flight finish on the old catalog.
    pub fn with_catalog(&self, catalog: &Catalog) -> Result<Session> {
        let old = &self.inner;
        let options = SessionOptions {
            direct_tools: old.gateway_direct_tools.clone(),
            context_tokens: old.context_tokens,
            on_event: old.on_event.clone(),
            code_runner: old.code_runner.clone(),
            capability_directory: Some(old.capability_directory),
        };
        let mut next = Session::new(
            catalog,
            old.config.clone(),
            Arc::clone(&old.executor),
            options,
        )?;
        let inner = Arc::get_mut(&mut next.inner)
            .ok_or_else(|| Error::internal("a new session is shared"))?;
        inner.stats = Arc::clone(&old.stats);
        inner.next_call = Arc::clone(&old.next_call);
        // The capability directory lists the catalog's owners: a new catalog renders anew.
        let surface_kept = matches!(self.mode(), Mode::Code | Mode::Tools)
            && inner.direct_tools == old.direct_tools
            && !old.capability_directory;
        if surface_kept {
            for (kept, surface) in inner.surfaces.iter().zip(&old.surfaces) {
                if let Some(surface) = surface.get() {
                    let _ = kept.set(Arc::clone(surface));
                }
            }
        }
        Ok(next)
    }

    pub fn mode(&self) -> Mode {
        effective_mode(&self.inner.config)
    }

    pub fn config(&self) -> &ResolvedConfig {
        &self.inner.config
    }

    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    fn code_runner(&self) -> Option<Arc<dyn CodeRunner>> {
        self.inner.code_runner.clone()
    }

    /// Whether `handle` answers `tool_name` in this mode: the mode's control
    /// tools, and exact names of catalog tools in direct and directory modes
    /// (not the gateway's own direct tools).
    pub fn handles(&self, tool_name: &str) -> bool {
        let mode = self.mode();
        if CONTROL_TOOL_NAMES.contains(&tool_name) {
            return control_names(control_set(mode)).contains(&tool_name);
        }
        if self.inner.direct_names.contains(tool_name) {
            return false;
        }
        match mode {
            Mode::Direct => self.inner.direct_mode_names.contains_key(tool_name),
            Mode::Directory => self.exact_name_ordinals(tool_name).next().is_some(),
            Mode::Code | Mode::Tools => false,
        }
    }

    /// Allowed catalog tools named exactly `name` (ids do not count).
    fn exact_name_ordinals<'a>(&'a self, name: &str) -> impl Iterator<Item = usize> + 'a {
        let catalog = &self.inner.catalog;
        catalog
            .data()
            .ordinals_named(name)
            .iter()
            .map(|&o| o as usize)
            .filter(move |&o| catalog.is_allowed(o))
    }

    /// The gateway reports the serialized size of a provider request (bytes, as
    /// a JS number: a negative or non-finite one is INVALID_REQUEST).
    pub fn record_request_bytes(&self, bytes: f64) -> Result<()> {
        if !bytes.is_finite() || bytes < 0.0 {
            return Err(Error::new(
                ErrorCode::InvalidRequest,
                "bytes must be a non-negative number",
            ));
        }
        let bytes = bytes as u64;
        if let Ok(mut stats) = self.inner.stats.lock() {
            stats.request_bytes.total = stats.request_bytes.total.saturating_add(bytes);
            stats.request_bytes.requests += 1;
            stats.request_bytes.last = bytes;
        }
        Ok(())
    }

    pub fn telemetry(&self) -> SessionTelemetry {
        let catalog = self.inner.catalog.telemetry();
        let stats = self
            .inner
            .stats
            .lock()
            .map(|s| StatsView::from(&*s))
            .unwrap_or_default();
        let (surface_schemas, surface_catalog) = stats
            .last_surface
            .as_ref()
            .map_or((0, 0), |s| (s.tools as u64, s.catalog_schemas as u64));
        SessionTelemetry {
            catalog,
            mode: self.mode(),
            schemas_up_front: surface_schemas + stats.last_hydrated,
            catalog_schemas_up_front: surface_catalog + stats.last_hydrated,
            surfaces_rendered: stats.surfaces_rendered,
            last_surface: stats.last_surface,
            surface_bytes: stats.bytes,
            request_bytes: stats.request_bytes,
            searches: stats.searches,
            describes: stats.describes,
            calls: stats.calls,
            code_runs: stats.code_runs,
            hydrated: stats.hydrated_total,
            tools_called: stats.tools_called,
            untracked_calls: stats.untracked_calls,
        }
    }

    fn emit(&self, event: SessionEvent) {
        event.trace();
        if let Some(sink) = &self.inner.on_event {
            sink(&event);
        }
    }

    fn with_stats(&self, f: impl FnOnce(&mut stats::Stats)) {
        if let Ok(mut stats) = self.inner.stats.lock() {
            f(&mut stats);
        }
    }

    fn next_tool_call_id(&self) -> String {
        format!(
            "ts_call_{}",
            self.inner.next_call.fetch_add(1, Ordering::Relaxed)
        )
    }
}

/// A snapshot of the mutable stats, taken under the lock.
#[derive(Default)]
struct StatsView {
    surfaces_rendered: u64,
    last_surface: Option<stats::SurfaceRecord>,
    bytes: stats::ByteTotals,
    request_bytes: stats::RequestBytes,
    searches: u64,
    describes: u64,
    calls: u64,
    code_runs: u64,
    last_hydrated: u64,
    hydrated_total: u64,
    tools_called: Vec<stats::CalledTool>,
    untracked_calls: u64,
}

impl From<&stats::Stats> for StatsView {
    fn from(s: &stats::Stats) -> Self {
        StatsView {
            surfaces_rendered: s.surfaces_rendered,
            last_surface: s.last_surface.clone(),
            bytes: s.bytes.clone(),
            request_bytes: s.request_bytes.clone(),
            searches: s.searches,
            describes: s.describes,
            calls: s.calls,
            code_runs: s.code_runs,
            last_hydrated: s.last_hydrated,
            hydrated_total: s.hydrated_total,
            tools_called: s.tools_called.clone(),
            untracked_calls: s.untracked_calls,
        }
    }
}

/// `enabled: false` always means direct schemas, whatever `mode` says.
fn effective_mode(config: &ResolvedConfig) -> Mode {
    if config.enabled {
        config.mode
    } else {
        Mode::Direct
    }
}

pub(crate) fn control_set(mode: Mode) -> ControlSet {
    match mode {
        Mode::Direct => ControlSet::None,
        Mode::Code => ControlSet::Code,
        Mode::Tools | Mode::Directory => ControlSet::Structured,
    }
}

fn control_names(set: ControlSet) -> &'static [&'static str] {
    match set {
        ControlSet::None => &[],
        ControlSet::Code => &[TOOL_SEARCH_CODE],
        ControlSet::Structured => &[TOOL_SEARCH, TOOL_DESCRIBE, TOOL_CALL],
    }
}

/// Directory mode keeps client tools directly visible and resolves hidden
/// names: a client tool sharing a name with an OpenClaw, plugin or MCP tool
/// would make both ambiguous, so the session refuses to start.
fn check_client_collisions(catalog: &Catalog) -> Result<()> {
    let mut others: HashMap<&str, &str> = HashMap::new();
    for e in catalog.entries().filter(|e| e.source != Source::Client) {
        others.entry(e.name.as_str()).or_insert(e.id.as_str());
    }
    let clashes: Vec<String> = catalog
        .entries()
        .filter(|e| e.source == Source::Client)
        .filter_map(|e| {
            others
                .get(e.name.as_str())
                .map(|other| format!("{} vs {}", e.id, other))
        })
        .take(5)
        .collect();
    if clashes.is_empty() {
        Ok(())
    } else {
        Err(collision(format!(
            "Client tool names collide with OpenClaw, plugin or MCP tool names in directory mode ({}); rename the client tools.",
            clashes.join("; ")
        )))
    }
}

/// The function name of each catalog tool in direct mode: its name, or for
/// MCP tools `<safeServerName>__<toolName>` (how OpenClaw exposes MCP tools
/// directly). Names held by more than one tool, or by a direct tool, are left
/// out: a provider rejects duplicates and a call could not be routed.
fn direct_mode_table(catalog: &Catalog, direct_names: &BTreeSet<String>) -> HashMap<String, usize> {
    let mut table: HashMap<String, Option<usize>> = HashMap::new();
    for (ordinal, e) in catalog.ordinals() {
        let name = direct_mode_name(e);
        table
            .entry(name)
            .and_modify(|slot| *slot = None)
            .or_insert(Some(ordinal));
    }
    let mut out = HashMap::with_capacity(table.len());
    for (name, slot) in table {
        match slot {
            Some(ordinal) if !direct_names.contains(&name) => {
                out.insert(name, ordinal);
            }
            Some(_) => {}
            None => {
                tracing::warn!(target: "tool_search::session", name = name.as_str(), "duplicate tool name left out of the direct surface")
            }
        }
    }
    out
}

pub(crate) fn direct_mode_name(e: &crate::catalog::ToolEntry) -> String {
    match e.mcp_info() {
        Some(mcp) => mcp.operation,
        None => e.name.clone(),
    }
}
