//! `ToolCatalog`: the run's catalog, exposed synchronously (a search costs
//! microseconds; an async hop would cost more than the work).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use tool_search_core::catalog::store::{self, SlotId};
use tool_search_core::catalog::{
    BatchRequest, Catalog, CatalogOptions, FromSlots, LookupStyle, SourceSelector,
};
use tool_search_core::search::with_second_thread;
use tool_search_core::ErrorCode;
use tool_search_gateway::allocator::with_build_purging;

use super::convert::{
    answer, dto, global_function, number_arg, object_arg, parsed, present, property, string_arg,
    stringify,
};
use super::errors::{from_napi, guard, invalid, js_error, to_js, JsCode, JsError, JsResult};
use super::promise::{on_worker, Worker};

#[napi(custom_finalize)]
pub struct ToolCatalog {
    pub(crate) inner: Catalog,
}

impl ToolCatalog {
    /// The JS object's contents: its native memory is reported to V8 until it is collected
    /// (`napi_adjust_external_memory`, counted by [`Catalog::host_hold`]), so V8 collects
    /// superseded versions.
    pub(crate) fn held(env: &Env, inner: Catalog) -> ToolCatalog {
        let _ = env.adjust_external_memory(inner.host_hold());
        ToolCatalog { inner }
    }
}

/// A built catalog as the JS object, or its coded error.
pub(crate) fn held(env: &Env, built: tool_search_core::Result<Catalog>) -> JsResult<ToolCatalog> {
    built
        .map(|inner| ToolCatalog::held(env, inner))
        .map_err(to_js)
}

impl ObjectFinalize for ToolCatalog {
    fn finalize(self, env: Env) -> Result<()> {
        let _ = env.adjust_external_memory(-self.inner.host_release());
        Ok(())
    }
}

/// Native bytes reported to V8 by this thread's catalogs. Internal (tests).
#[napi(js_name = "__reportedNativeBytes", skip_typescript)]
pub fn reported_native_bytes() -> f64 {
    tool_search_core::catalog::host_held().1 as f64
}

fn parse_options(env: &Env, options: Option<Unknown>) -> JsResult<CatalogOptions> {
    let what = "invalid catalog options";
    let options: Option<CatalogOptions> = dto(env, options, ErrorCode::InvalidCatalog, what)?;
    let mut options = options.unwrap_or_default();
    tool_search_gateway::model::apply_ranking_defaults(&mut options);
    Ok(options)
}

/// The tool array as JSON text, each record serialized on its own (as
/// `js/catalog.js` does): one that JSON cannot express (undefined, a function,
/// a BigInt, a cycle, a throwing getter) becomes the core's stand-in with why
/// and the fields of it that can be read (`unreadable_record`), never `null`
/// (a whole-array `JSON.stringify` turns undefined and functions into
/// `null`), so the core excludes it alone with the right reason, or (`repair`)
/// indexes it by those fields.
fn tools_text(env: &Env, tools: Unknown) -> JsResult<String> {
    let array = tools_array(&tools)?;
    let mut text = String::from("[");
    for i in 0..array.len() {
        if i > 0 {
            text.push(',');
        }
        let element: Option<Unknown> = array.get(i).map_err(from_napi)?;
        // The core excludes what JSON cannot express with this reason.
        let why = match element.map(|e| stringify(env, e, None)) {
            Some(Ok(Some(json))) => {
                text.push_str(&json);
                continue;
            }
            Some(Err(thrown)) => {
                format!("the tool could not be serialized (JSON.stringify threw {thrown})")
            }
            _ => "a tool must be a JSON object, not undefined or a function".to_string(),
        };
        let fields = &tool_search_core::catalog::UNREADABLE_FIELDS;
        let readable = element.and_then(|e| stringify(env, e, Some(fields)).ok().flatten());
        text.push_str(&tool_search_core::catalog::unreadable_record(
            &why,
            readable.as_deref(),
        ));
    }
    text.push(']');
    Ok(text)
}

/// `fromJson`'s arguments read: the build of a catalog text (`buildFromJson` runs it later).
fn text_build(
    env: &Env,
    text: Unknown,
    options: Option<Unknown>,
) -> JsResult<impl FnOnce() -> tool_search_core::Result<Catalog> + Send + 'static> {
    let text = string_arg(text, ErrorCode::InvalidCatalog, "text")?;
    let options = parse_options(env, options)?;
    Ok(move || Catalog::from_json_text(&text, &options))
}

fn selector_arg(env: &Env, selector: Unknown) -> JsResult<SourceSelector> {
    let what = "selector must be { source: 'openclaw' | 'mcp' | 'client', owner: string }";
    dto(env, Some(selector), ErrorCode::InvalidRequest, what)
}

/// `{ limit?: number | null }` → the requested limit, if any. Read from the
/// JS value directly so NaN and Infinity reach the limit check (JSON has no
/// such numbers).
pub(crate) fn limit_option(options: Option<Unknown>) -> JsResult<Option<f64>> {
    let Some(options) = present(options)? else {
        return Ok(None);
    };
    let options = object_arg(options, ErrorCode::InvalidRequest, "search options")?;
    match property(&options, "limit")? {
        None => Ok(None),
        Some(limit) => number_arg(limit, ErrorCode::InvalidLimit, "limit")
            .map(Some)
            .map_err(|_| js_error(ErrorCode::InvalidLimit, "limit must be a positive integer.")),
    }
}

/// A `searchBatch` request from JS (coded INVALID_QUERY when it is not one).
pub(crate) fn batch_request(env: &Env, request: Unknown) -> JsResult<BatchRequest> {
    let what = "invalid search request";
    dto(env, Some(request), ErrorCode::InvalidQuery, what)
}

/// Builds a catalog on a libuv worker thread, so a large catalog does not
/// hold the gateway's event loop (`ToolCatalog.build`, `buildFromJson`,
/// `appendAsync`, …): a catalog, or (builds by id only) the positions of ids
/// the store no longer holds.
pub type BuildTask = Worker<FromSlots, Either<ToolCatalog, Vec<u32>>>;

/// `job` (or the argument error to reject with) as a [`BuildTask`].
fn build_task<J>(job: JsResult<J>) -> AsyncTask<BuildTask>
where
    J: FnOnce() -> tool_search_core::Result<FromSlots> + Send + 'static,
{
    let job = job.map(|job| move || with_build_purging(|| job().map_err(to_js)));
    on_worker(job, slots_answer)
}

/// The error of a build the package's `ToolCatalog` (`js/catalog.js`) runs
/// through its record cache: its native form is reached only for `tools`
/// that are not an array (INVALID_CATALOG), and refuses an array.
fn not_native(tools: &Unknown) -> JsError {
    let refused = "build catalogs with the package's ToolCatalog (index.js), not the native class";
    tools_array(tools).err().unwrap_or_else(|| invalid(refused))
}

/// The job of a [`BuildTask`] that rejects (see [`not_native`]).
type Refused = fn() -> tool_search_core::Result<FromSlots>;

/// A build that makes a catalog (not a build by id).
fn built(catalog: tool_search_core::Result<Catalog>) -> tool_search_core::Result<FromSlots> {
    catalog.map(FromSlots::Built)
}

/// A build by id's answer as JS sees it: the catalog, or the missing positions.
fn slots_answer(env: &Env, built: FromSlots) -> Either<ToolCatalog, Vec<u32>> {
    match built {
        FromSlots::Built(inner) => Either::A(ToolCatalog::held(env, inner)),
        FromSlots::Missing(positions) => {
            Either::B(positions.into_iter().map(|p| p as u32).collect())
        }
    }
}

/// `tools` as a JS array, or INVALID_CATALOG.
fn tools_array<'a>(tools: &Unknown<'a>) -> JsResult<Array<'a>> {
    let not_array = "tools must be an array of tool objects";
    array_arg(tools)?.ok_or_else(|| js_error(ErrorCode::InvalidCatalog, not_array))
}

/// `value` as a JS array, or `None` when it is not one.
fn array_arg<'a>(value: &Unknown<'a>) -> JsResult<Option<Array<'a>>> {
    if !value.is_array().map_err(from_napi)? {
        return Ok(None);
    }
    // SAFETY: checked to be a JS array just above; `Array` only wraps the same handle.
    unsafe { value.cast() }.map(Some).map_err(from_napi)
}

/// Store the records in `texts` (an array of tool records, each a string
/// `JSON.stringify` made) for the JS-side record cache (`js/catalog.js`).
/// Returns each record's id as two numbers (slot, generation). Internal.
///
/// Each string is read on its own: joining them into one array text first
/// allocated a second copy of every record on the V8 heap, and the young
/// generation's scavenges it caused were the longest stalls of a first build.
#[napi(js_name = "__internRecords", skip_typescript)]
pub fn intern_records(texts: Unknown) -> Result<Vec<u32>, JsCode> {
    guard(|| {
        let message = "records must be an array of strings";
        let not_strings = || js_error(ErrorCode::InvalidCatalog, message);
        let array = array_arg(&texts)?.ok_or_else(not_strings)?;
        let mut records = Vec::with_capacity(array.len() as usize);
        for i in 0..array.len() {
            let text: Option<Unknown> = array.get(i).map_err(from_napi)?;
            let text = text.ok_or_else(not_strings)?;
            records.push(string_arg(text, ErrorCode::InvalidCatalog, "each record")?);
        }
        Ok(store::intern_named_pairs(
            records.iter().map(String::as_str),
        ))
    })
}

/// Record ids from a Uint32Array of (slot, generation) pairs.
fn ids_arg(ids: &Unknown) -> JsResult<Vec<SlotId>> {
    // SAFETY: the cast checks the typed array's type (napi_get_typedarray_info) and fails
    // otherwise; the slice borrows the array's buffer for this call's scope only.
    let pairs: Uint32ArraySlice =
        unsafe { ids.cast() }.map_err(|_| invalid("record ids must be a Uint32Array"))?;
    SlotId::from_pairs(&pairs).ok_or_else(|| invalid("record ids come in (slot, generation) pairs"))
}

/// A catalog of stored records, by slot (the JS constructor's path), or the positions of
/// records the store no longer holds (`js/catalog.js` serializes those tools again).
#[napi(js_name = "__catalogFromSlots", skip_typescript)]
pub fn catalog_from_slots(
    env: Env,
    slots: Unknown,
    options: Option<Unknown>,
) -> Result<Either<ToolCatalog, Vec<u32>>, JsCode> {
    guard(|| {
        let ids = ids_arg(&slots)?;
        let options = parse_options(&env, options)?;
        // The caller's loop waits for this build: a second thread shortens it.
        with_second_thread(|| Catalog::from_slots(&ids, &options))
            .map(|built| slots_answer(&env, built))
            .map_err(to_js)
    })
}

/// `__catalogFromSlots` with the lookup and build on a libuv worker (`ToolCatalog.build`'s path).
#[napi(js_name = "__buildFromSlots", skip_typescript)]
pub fn build_from_slots(
    env: Env,
    slots: Unknown,
    options: Option<Unknown>,
) -> AsyncTask<BuildTask> {
    build_task(guard(|| {
        let (ids, options) = (ids_arg(&slots)?, parse_options(&env, options)?);
        Ok(move || with_second_thread(|| Catalog::from_slots(&ids, &options)))
    }))
}

/// A memory-pressure hook: drop cached catalog builds and stored tool
/// records that no catalog object holds. Catalogs in use are untouched; the
/// next build of released tools serializes and indexes them again.
#[napi(ts_return_type = "{ catalogs: number; records: number }")]
pub fn release_unused_memory(env: &Env) -> Result<Unknown<'_>, JsCode> {
    guard(|| parsed(env, &tool_search_core::catalog::release_unused()))
}

/// What the package holds in native memory now: distinct catalog data that catalog
/// objects of this thread hold (and their estimated bytes), builds kept for reuse, and
/// stored tool records. For a long-lived gateway's memory accounting; cheap.
#[napi(
    ts_return_type = "{ heldCatalogs: number; heldBytes: number; recentBuilds: number; storedRecords: number; storedRecordBytes: number }"
)]
pub fn native_memory(env: &Env) -> Result<Unknown<'_>, JsCode> {
    guard(|| parsed(env, &tool_search_core::catalog::native_memory()))
}

#[napi]
impl ToolCatalog {
    /// Build (or reuse, when unchanged) the catalog for a run. Bad records are
    /// excluded with a reason (see `excluded`), or throw with `strict: true`.
    /// The package's `ToolCatalog` (`js/catalog.js`) serializes each distinct
    /// tool object once and builds from stored records; this native form,
    /// reached only for a non-array argument, throws the coded error.
    #[napi(
        constructor,
        ts_args_type = "tools: CatalogTool[], options?: CatalogOptions | null"
    )]
    pub fn new(tools: Unknown, _options: Option<Unknown>) -> Result<Self, JsCode> {
        guard(|| Err(not_native(&tools)))
    }

    /// The constructor's work off the event loop: tools not seen before are
    /// serialized in slices of at most 2 ms (`js/catalog.js`); parsing and
    /// indexing run on a libuv worker. Rejects with the errors the
    /// constructor throws.
    #[napi(
        ts_args_type = "tools: CatalogTool[], options?: CatalogOptions | null",
        ts_return_type = "Promise<ToolCatalog>"
    )]
    pub fn build(tools: Unknown, _options: Option<Unknown>) -> AsyncTask<BuildTask> {
        build_task::<Refused>(guard(|| Err(not_native(&tools))))
    }

    /// `fromJson` off the event loop.
    #[napi(
        ts_args_type = "text: string, options?: CatalogOptions | null",
        ts_return_type = "Promise<ToolCatalog>"
    )]
    pub fn build_from_json(
        env: Env,
        text: Unknown,
        options: Option<Unknown>,
    ) -> AsyncTask<BuildTask> {
        build_task(guard(|| text_build(&env, text, options)).map(|build| || built(build())))
    }

    /// Build from catalog text: a JSON array of tools, or JSON Lines (the
    /// dev-catalog format).
    #[napi(
        factory,
        ts_args_type = "text: string, options?: CatalogOptions | null"
    )]
    pub fn from_json(env: Env, text: Unknown, options: Option<Unknown>) -> Result<Self, JsCode> {
        guard(|| held(&env, with_second_thread(text_build(&env, text, options)?)))
    }

    /// Number of cataloged tools this view allows.
    #[napi(getter)]
    pub fn size(&self) -> Result<u32, JsCode> {
        guard(|| Ok(self.inner.size() as u32))
    }

    /// Content fingerprint: equal for the same tools, schemas and policy view.
    #[napi(getter)]
    pub fn fingerprint(&self) -> Result<String, JsCode> {
        guard(|| Ok(self.inner.fingerprint().to_string()))
    }

    /// Direct-only tools the policy allows, as supplied: keep them visible.
    #[napi(getter, ts_return_type = "CatalogTool[]")]
    pub fn direct_only<'env>(&self, env: &'env Env) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let raw: Vec<&Value> = self.inner.direct_only().iter().map(|d| &d.raw).collect();
            parsed(env, &raw)
        })
    }

    /// Records that were not cataloged, with the reason.
    #[napi(getter, ts_return_type = "ExcludedTool[]")]
    pub fn excluded<'env>(&self, env: &'env Env) -> Result<Unknown<'env>, JsCode> {
        guard(|| parsed(env, &self.inner.excluded()))
    }

    /// Records indexed in a repaired form (`repair: true`), with the refusal,
    /// what changed and the id each is indexed under.
    #[napi(getter, ts_return_type = "RepairedTool[]")]
    pub fn repaired<'env>(&self, env: &'env Env) -> Result<Unknown<'env>, JsCode> {
        guard(|| parsed(env, &self.inner.repaired()))
    }

    /// Ids of the allowed tools, in id order.
    #[napi]
    pub fn ids(&self) -> Result<Vec<String>, JsCode> {
        guard(|| Ok(self.inner.entries().map(|e| e.id.clone()).collect()))
    }

    /// Ranked compact hits. `limit`: omitted/null → searchDefaultLimit; above
    /// maxSearchLimit → capped; non-integer or < 1 → INVALID_LIMIT. A hybrid
    /// catalog embeds a query it has not seen on the calling thread (about
    /// 3-4 ms median, 20+ ms for a long request; repeats hit a bounded cache):
    /// on an event loop, use `searchAsync`, which ranks identically.
    #[napi(
        ts_args_type = "query: string, options?: { limit?: number | null } | null",
        ts_return_type = "SearchHit[]"
    )]
    pub fn search<'env>(
        &self,
        env: &'env Env,
        query: Unknown,
        options: Option<Unknown>,
    ) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let query = string_arg(query, ErrorCode::InvalidQuery, "query")?;
            let limit = limit_option(options)?;
            // Embeds an uncached query on this thread (the sync API); `searchAsync` does not.
            let options = tool_search_core::catalog::SearchOptions::hits(limit);
            answer(env, self.inner.search(&query, &options))
        })
    }

    /// Several queries in one call, within the batch budgets. Embeds on the
    /// calling thread as `search` does; `searchBatchAsync` does not.
    #[napi(
        ts_args_type = "request: SearchBatchRequest",
        ts_return_type = "SearchBatchResult"
    )]
    pub fn search_batch<'env>(
        &self,
        env: &'env Env,
        request: Unknown,
    ) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let request = batch_request(env, request)?;
            let here = tool_search_core::catalog::QueryVectorSet::embed_here();
            answer(env, self.inner.search_batch(&request, &here))
        })
    }

    /// The compact hit plus the exact schemas: exact id first, then a unique name.
    #[napi(ts_args_type = "idOrName: string", ts_return_type = "ToolDescription")]
    pub fn describe<'env>(
        &self,
        env: &'env Env,
        id_or_name: Unknown,
    ) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let id_or_name = string_arg(id_or_name, ErrorCode::InvalidRequest, "idOrName")?;
            let described = self.inner.describe(&id_or_name, LookupStyle::Structured);
            answer(env, described)
        })
    }

    /// Check arguments against the tool's input schema.
    #[napi(
        ts_args_type = "idOrName: string, args: unknown",
        ts_return_type = "ArgsValidation"
    )]
    pub fn validate_args<'env>(
        &self,
        env: &'env Env,
        id_or_name: Unknown,
        args: Option<Unknown>,
    ) -> Result<Unknown<'env>, JsCode> {
        guard(|| {
            let id_or_name = string_arg(id_or_name, ErrorCode::InvalidRequest, "idOrName")?;
            let args: Value = dto(env, args, ErrorCode::InvalidRequest, "args")?;
            answer(env, self.inner.validate_args(&id_or_name, &args))
        })
    }

    /// This catalog plus `tools`, under the same policy and limits. The
    /// telemetry counter scope carries over (appending continues the running
    /// totals; a new `ToolCatalog` starts new ones). Not on restricted views.
    #[napi(ts_args_type = "tools: CatalogTool[]")]
    pub fn append(&self, env: Env, tools: Unknown) -> Result<ToolCatalog, JsCode> {
        guard(|| {
            let text = tools_text(&env, tools)?;
            held(&env, with_second_thread(|| self.inner.append(&text)))
        })
    }

    /// `append` off the event loop (the union is re-indexed on a libuv worker).
    #[napi(
        ts_args_type = "tools: CatalogTool[]",
        ts_return_type = "Promise<ToolCatalog>"
    )]
    pub fn append_async(&self, tools: Unknown) -> AsyncTask<BuildTask> {
        build_task::<Refused>(guard(|| Err(not_native(&tools))))
    }

    /// This catalog with exactly the tools of `selector` (one source's owner,
    /// e.g. an MCP server) replaced by `tools`: `[]` removes them, a new
    /// owner is added. Accepts a server's `tools/list` answer as is (missing
    /// `source`/`owner` are the selector's; naming another is INVALID_CATALOG
    /// and nothing changes). Same policy, limits, strictness; the counter
    /// scope carries over. Ranks exactly as a full build of the final tools.
    #[napi(ts_args_type = "selector: SourceSelector, tools: CatalogTool[]")]
    pub fn with_source(
        &self,
        env: Env,
        selector: Unknown,
        tools: Unknown,
    ) -> Result<ToolCatalog, JsCode> {
        guard(|| {
            let selector = selector_arg(&env, selector)?;
            let text = tools_text(&env, tools)?;
            let built = with_second_thread(|| self.inner.with_source(&selector, &text));
            held(&env, built)
        })
    }

    /// `withSource` with the build on a libuv worker.
    #[napi(
        ts_args_type = "selector: SourceSelector, tools: CatalogTool[]",
        ts_return_type = "Promise<ToolCatalog>"
    )]
    pub fn with_source_async(
        &self,
        env: Env,
        selector: Unknown,
        tools: Unknown,
    ) -> AsyncTask<BuildTask> {
        build_task::<Refused>(guard(|| {
            Err(selector_arg(&env, selector)
                .err()
                .unwrap_or_else(|| not_native(&tools)))
        }))
    }

    /// `appendAsync` of stored records (`js/catalog.js` serializes the tools
    /// in slices first). Internal.
    #[napi(js_name = "__appendFromSlots", skip_typescript)]
    pub fn append_from_slots(&self, slots: Unknown) -> AsyncTask<BuildTask> {
        build_task(guard(|| {
            let (catalog, ids) = (self.inner.clone(), ids_arg(&slots)?);
            Ok(move || catalog.append_slots(&ids))
        }))
    }

    /// `withSourceAsync` of stored records (`js/catalog.js` serializes the
    /// tools in slices first). Internal.
    #[napi(js_name = "__withSourceFromSlots", skip_typescript)]
    pub fn with_source_from_slots(
        &self,
        env: Env,
        selector: Unknown,
        slots: Unknown,
    ) -> AsyncTask<BuildTask> {
        build_task(guard(|| {
            let (catalog, selector) = (self.inner.clone(), selector_arg(&env, selector)?);
            let ids = ids_arg(&slots)?;
            Ok(move || catalog.with_source_slots(&selector, &ids))
        }))
    }

    /// This catalog's next version holding exactly `tools` (a new run's whole
    /// list): derived owner by owner when at most 8 owners' tools changed
    /// (and those are at most a quarter of the list), a full build otherwise;
    /// either way equal to `ToolCatalog.build(tools)` with this catalog's
    /// options. The counter scope carries over; unavailable owners stay so.
    #[napi(
        ts_args_type = "tools: CatalogTool[]",
        ts_return_type = "Promise<ToolCatalog>"
    )]
    pub fn update_async(&self, tools: Unknown) -> AsyncTask<BuildTask> {
        build_task::<Refused>(guard(|| Err(not_native(&tools))))
    }

    /// `updateAsync` of stored records (`js/catalog.js` reads the tools
    /// through its record cache first). Internal.
    #[napi(js_name = "__updateFromSlots", skip_typescript)]
    pub fn update_from_slots(&self, slots: Unknown) -> AsyncTask<BuildTask> {
        build_task(guard(|| {
            let (catalog, ids) = (self.inner.clone(), ids_arg(&slots)?);
            Ok(move || catalog.update_slots(&ids))
        }))
    }

    /// This catalog with the tools of `selector` (e.g. a disconnected MCP
    /// server) kept but unable to run: search leaves them out, a call fails
    /// closed with TOOL_UNAVAILABLE and `reason` ("server github
    /// disconnected"). `withSource` with fresh tools makes them available again.
    #[napi(ts_args_type = "selector: SourceSelector, reason: string")]
    pub fn with_unavailable(
        &self,
        env: Env,
        selector: Unknown,
        reason: Unknown,
    ) -> Result<ToolCatalog, JsCode> {
        guard(|| {
            let selector = selector_arg(&env, selector)?;
            let reason = string_arg(reason, ErrorCode::InvalidRequest, "reason")?;
            held(&env, self.inner.with_unavailable(&selector, &reason))
        })
    }

    /// A narrowed view (names or ids) over the same index: nothing is rebuilt,
    /// telemetry counters are shared.
    #[napi(ts_args_type = "allowedNames: Iterable<string>")]
    pub fn restrict(&self, env: Env, allowed_names: Unknown) -> Result<ToolCatalog, JsCode> {
        guard(|| {
            // `Array.from` called without `this` makes a plain array.
            let from: Function<Unknown, Unknown> =
                global_function(&env, "Array", "from").map_err(from_napi)?;
            let names = from.call(allowed_names).map_err(|e| {
                let reason = &e.reason;
                invalid(format!(
                    "allowedNames must be an iterable of strings: {reason}"
                ))
            })?;
            let what = "allowedNames must contain only strings";
            let names: Vec<String> = dto(&env, Some(names), ErrorCode::InvalidRequest, what)?;
            Ok(ToolCatalog::held(&env, self.inner.restrict(&names)))
        })
    }

    /// Contract §6 counters for this catalog's scope.
    #[napi(ts_return_type = "CatalogTelemetry")]
    pub fn telemetry<'env>(&self, env: &'env Env) -> Result<Unknown<'env>, JsCode> {
        guard(|| parsed(env, &self.inner.telemetry()))
    }

    /// Per tool given to the build (in order), the id it is indexed under (a
    /// repaired tool's new id), or null: not indexed (see `excluded`),
    /// direct-only, or outside this view.
    #[napi(getter, ts_return_type = "Array<string | null>")]
    pub fn record_ids(&self) -> Result<Vec<Option<&str>>, JsCode> {
        guard(|| Ok(self.inner.record_ids().collect()))
    }
}
