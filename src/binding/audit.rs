//! `catalog.audit(options?)`: the operator's audit of a catalog, computed off
//! the event loop (two searches a tool).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tool_search_core::catalog::AuditOptions;
use tool_search_core::ErrorCode;

use super::catalog::ToolCatalog;
use super::convert::dto;
use super::errors::{guard, JsCode};
use super::promise::blocking_promise;

#[napi]
impl ToolCatalog {
    /// Which of this catalog's searchable tools the model will struggle to find, and why
    /// (findability, empty/short/duplicated descriptions, near-duplicates across servers,
    /// name collisions, schema size and validation cost), most urgent first, with per-server
    /// and catalog totals. Runs off the event loop: two searches a tool in the catalog's
    /// ranking (about 4 s for 15,000 tools, lexically, on two cores).
    #[napi(
        ts_args_type = "options?: AuditOptions",
        ts_return_type = "Promise<CatalogAudit>"
    )]
    pub fn audit<'env>(
        &self,
        env: &'env Env,
        options: Option<Unknown>,
    ) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
        let what = "audit options must be { findability?: boolean }";
        let options: Option<AuditOptions> =
            guard(|| dto(env, options, ErrorCode::InvalidRequest, what))?;
        let options = options.unwrap_or_default();
        let catalog = self.inner.clone();
        blocking_promise(env, move || Ok(catalog.audit(&options)))
    }
}
