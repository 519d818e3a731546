//! What the model sees: the mode's surface (memoized per format).

use std::sync::Arc;

use super::events::SessionEvent;
use super::stats::SurfaceRecord;
use super::{control_set, direct_mode_name, Session};
use crate::catalog::{Source, ToolEntry};
use crate::config::Mode;
use crate::surfaces::{control_tools, directory_text, ModelSurface, SurfaceFormat, ToolDefinition};

pub(super) fn entry_definition(e: &ToolEntry, name: String) -> ToolDefinition {
    ToolDefinition::new(name, e.description.clone(), e.input_schema.as_deref())
}

impl Session {
    /// The tools (and directory text) to send in `format`. Same session, same
    /// format: the same memoized surface. Every call is recorded as a render.
    pub fn surface(&self, format: SurfaceFormat) -> Arc<ModelSurface> {
        let surface = self.inner.surfaces[format.index()].get_or_init(|| Arc::new(self.build_surface(format))).clone();
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

    /// The directory text (directory mode only).
    pub fn directory_prompt(&self) -> Option<Arc<str>> {
        let options = self.inner.directory.as_ref()?;
        let catalog = &self.inner.catalog;
        Some(directory_text(catalog.fingerprint(), || catalog.entries_by_name(), options))
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
        defs.extend(self.visible_catalog_tools().map(|(e, name)| entry_definition(e, name)));
        defs
    }

    /// Catalog tools shown with their schema: all (direct mode), client
    /// tools (directory mode), none otherwise.
    fn visible_catalog_tools(&self) -> Box<dyn Iterator<Item = (&ToolEntry, String)> + '_> {
        let inner = &self.inner;
        match self.mode() {
            Mode::Direct => Box::new(inner.catalog.ordinals().filter_map(move |(o, e)| {
                let name = direct_mode_name(e);
                (inner.direct_mode_names.get(&name) == Some(&o)).then_some((e, name))
            })),
            Mode::Directory => Box::new(
                inner
                    .catalog
                    .entries()
                    .filter(|e| e.source == Source::Client && !inner.direct_names.contains(&e.name))
                    .map(|e| (e, e.name.clone())),
            ),
            Mode::Code | Mode::Tools => Box::new(std::iter::empty()),
        }
    }

    fn catalog_schema_count(&self) -> usize {
        self.visible_catalog_tools().count()
    }
}
