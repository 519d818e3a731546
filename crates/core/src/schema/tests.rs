//! Unit tests of the schema module: `cargo test -p tool-search-core schema`.

use serde_json::{json, Map, Value};

/// `{"type":"object","properties":{"child": <inner>}}` nested `depth` times,
/// built iteratively so the builder itself does not recurse.
pub(super) fn nested_schema(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        schema = json!({"type": "object", "properties": {"child": schema}});
    }
    schema
}

/// An object schema with `count` string properties `p0..`, all required if asked.
pub(super) fn wide_schema(count: usize, required: bool) -> Value {
    let mut props = Map::new();
    for i in 0..count {
        props.insert(
            format!("p{i}"),
            json!({"type": "string", "description": format!("param {i}")}),
        );
    }
    let names: Vec<Value> = if required {
        (0..count).map(|i| json!(format!("p{i}"))).collect()
    } else {
        vec![]
    };
    json!({"type": "object", "properties": props, "required": names})
}

mod bounds {
    //! `check_bounds`: depth and size of untrusted JSON.

    use serde_json::{json, Map, Value};

    use super::nested_schema;
    use crate::schema::check_bounds;

    #[test]
    fn depth_counts_containers() {
        assert!(check_bounds(&json!("scalar"), 0, 100).is_ok());
        assert!(check_bounds(&json!({}), 1, 100).is_ok());
        assert!(check_bounds(&json!({}), 0, 100).is_err());
        assert!(check_bounds(&json!({"a": []}), 2, 100).is_ok());
        let err = check_bounds(&json!({"a": [1]}), 1, 100).unwrap_err();
        assert!(err.contains("deeper than 1"), "{err}");
    }

    #[test]
    fn deep_schema_is_rejected_without_recursion() {
        // Each level is two containers deep (object + properties map).
        let schema = nested_schema(120);
        let err = check_bounds(&schema, crate::limits::MAX_JSON_DEPTH, usize::MAX).unwrap_err();
        assert!(err.contains("deeper than 64"), "{err}");
        assert!(check_bounds(
            &nested_schema(20),
            crate::limits::MAX_JSON_DEPTH,
            usize::MAX
        )
        .is_ok());
    }

    #[test]
    fn size_matches_compact_serialization_without_escapes() {
        let mut props = Map::new();
        for i in 0..10_000 {
            props.insert(
                format!("p{i}"),
                json!({"type": "string", "n": i, "neg": -i, "f": 1.5, "b": true, "z": null}),
            );
        }
        let value = json!({"properties": props, "list": [1, "two", [], {}]});
        let exact = serde_json::to_string(&value).unwrap().len();
        assert!(check_bounds(&value, 8, exact).is_ok());
        let err = check_bounds(&value, 8, exact - 1).unwrap_err();
        assert!(err.contains("larger than"), "{err}");
    }

    #[test]
    fn size_limit_stops_early_on_huge_values() {
        let big: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
        assert!(check_bounds(&Value::Array(big), 4, crate::limits::MAX_SCHEMA_BYTES).is_err());
        assert!(check_bounds(&json!("x".repeat(100)), 4, 50).is_err());
    }
}

mod hint {
    //! `input_hint` / `output_hint`: TypeScript-style hints.

    use serde_json::{json, Value};

    use super::{nested_schema, wide_schema};
    use crate::limits::INPUT_HINT_MAX_CHARS;
    use crate::schema::{input_hint, output_hint};

    fn hint(schema: Value) -> String {
        input_hint(Some(&schema))
    }

    // ---- golden: schemas copied from the retrieval-dev catalog ----

    #[test]
    fn golden_flat_required_strings() {
        // openclaw:seal:analyzeEvidence
        let schema = json!({"properties": {"evidence_type": {"description": "The type of evidence to be analyzed (e.g., DNA, fingerprints, blood, fibers)", "type": "string"}, "method": {"description": "The method or technique to be used for analysis (e.g., spectroscopy, chromatography, microscopy)", "type": "string"}, "sample": {"description": "The sample or specimen to be analyzed (e.g., crime scene swab, hair strand, fabric sample)", "type": "string"}}, "required": ["evidence_type", "method", "sample"], "type": "object"});
        assert_eq!(
            hint(schema),
            "{ evidence_type: string; method: string; sample: string }"
        );
    }

    #[test]
    fn golden_array_and_enum() {
        // mcp:npm-sentinel-mcp:npmTrends
        let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "additionalProperties": false, "properties": {"packages": {"description": "List of package names to get trends for", "items": {"type": "string"}, "type": "array"}, "period": {"default": "last-month", "description": "Time period for trends. Options: \"last-week\", \"last-month\", \"last-year\"", "enum": ["last-week", "last-month", "last-year"], "type": "string"}}, "required": ["packages"], "type": "object"});
        assert_eq!(
            hint(schema),
            r#"{ packages: string[]; period?: "last-week" | "last-month" | "last-year" }"#
        );
    }

    #[test]
    fn golden_nullable_any_of() {
        // mcp:biomcp:fetch
        let schema = json!({"properties": {"call_benefit": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Brief explanation of why this fetch is being performed and expected benefit.", "title": "Call Benefit"}, "detail": {"anyOf": [{"enum": ["protocol", "locations", "outcomes", "references", "all", "full"], "type": "string"}, {"type": "null"}], "default": null, "title": "Detail"}, "domain": {"anyOf": [{"enum": ["article", "trial", "variant"], "type": "string"}, {"type": "null"}], "default": null, "description": "Domain of the record (auto-detected if not provided)", "title": "Domain"}, "id": {"title": "Id", "type": "string"}}, "required": ["id"], "title": "fetchArguments", "type": "object"});
        assert_eq!(
            hint(schema),
            r#"{ id: string; call_benefit?: string | null; detail?: "protocol" | "locations" | "outcomes" | "references" | "all" | "full" | null; domain?: "article" | "trial" | "variant" | null }"#
        );
    }

    #[test]
    fn golden_const_union() {
        // mcp:trends-hub:get-36kr-trending
        let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "additionalProperties": false, "properties": {"type": {"anyOf": [{"const": "hot", "description": "人气榜", "type": "string"}, {"const": "video", "description": "视频榜", "type": "string"}, {"const": "comment", "description": "热议榜", "type": "string"}, {"const": "collect", "description": "收藏榜", "type": "string"}], "default": "hot", "description": "分类"}}, "type": "object"});
        assert_eq!(
            hint(schema),
            r#"{ type?: "hot" | "video" | "comment" | "collect" }"#
        );
    }

    #[test]
    fn golden_array_of_objects() {
        // mcp:mcp-server-chart:generate_radar_chart
        let schema = json!({"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"data": {"description": "Data for radar chart, such as, [{ name: 'Design', value: 70 }].", "items": {"properties": {"group": {"type": "string"}, "name": {"type": "string"}, "value": {"type": "number"}}, "required": ["name", "value"], "type": "object"}, "minItems": 1, "type": "array"}, "height": {"default": 400, "description": "Set the height of chart, default is 400.", "type": "number"}, "theme": {"default": "default", "description": "Set the theme for the chart, optional, default is 'default'.", "enum": ["default", "academy"], "type": "string"}, "title": {"default": "", "description": "Set the title of chart.", "type": "string"}, "width": {"default": 600, "description": "Set the width of chart, default is 600.", "type": "number"}}, "required": ["data"], "type": "object"});
        assert_eq!(
            hint(schema),
            r#"{ data: { name: string; value: number; group?: string }[]; height?: number; theme?: "default" | "academy"; title?: string; width?: number }"#
        );
    }

    #[test]
    fn golden_nullable_enum_array_and_integer() {
        // mcp:investor:get_cnn_fear_greed_index
        let schema = json!({"properties": {"days": {"default": 0, "title": "Days", "type": "integer"}, "indicators": {"anyOf": [{"items": {"enum": ["fear_and_greed", "fear_and_greed_historical", "put_call_options", "market_volatility_vix", "market_volatility_vix_50", "junk_bond_demand", "safe_haven_demand"], "type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "title": "Indicators"}}, "title": "get_cnn_fear_greed_indexArguments", "type": "object"});
        assert_eq!(
            hint(schema),
            r#"{ days?: number /* integer */; indicators?: ("fear_and_greed" | "fear_and_greed_historical" | "put_call_options" | "market_volatility_vix" | "market_volatility_vix_50" | "junk_bond_demand" | "safe_haven_demand")[] | null }"#
        );
    }

    #[test]
    fn golden_nullable_array() {
        // mcp:okppt:clear_placeholders_from_slides
        let schema = json!({"properties": {"output_path": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "title": "Output Path"}, "prs_path": {"title": "Prs Path", "type": "string"}, "slide_indices": {"anyOf": [{"items": {"type": "integer"}, "type": "array"}, {"type": "null"}], "default": null, "title": "Slide Indices"}}, "required": ["prs_path"], "title": "clear_placeholders_from_slidesArguments", "type": "object"});
        assert_eq!(
        hint(schema),
        "{ prs_path: string; output_path?: string | null; slide_indices?: (number /* integer */)[] | null }"
    );
    }

    // ---- rules ----

    #[test]
    fn missing_or_empty_schema_is_empty_object() {
        assert_eq!(input_hint(None), "{}");
        assert_eq!(hint(Value::Null), "{}");
        assert_eq!(hint(json!({})), "{}");
        assert_eq!(hint(json!({"type": "object"})), "{}");
        assert_eq!(hint(json!({"type": "object", "properties": {}})), "{}");
    }

    #[test]
    fn non_schemas_render_unknown() {
        assert_eq!(hint(json!(true)), "unknown");
        assert_eq!(hint(json!(42)), "unknown");
        assert_eq!(hint(json!("string")), "unknown");
        assert_eq!(hint(json!([1, 2])), "unknown");
        assert_eq!(hint(json!({"type": 5})), "unknown");
        assert_eq!(hint(json!({"type": "banana"})), "unknown");
        assert_eq!(hint(json!({"enum": 5})), "unknown");
        assert_eq!(
            hint(json!({"type": "object", "properties": {"a": true, "b": false, "c": 7, "d": {}}})),
            "{ a?: unknown; b?: never; c?: unknown; d?: unknown }"
        );
    }

    #[test]
    fn scalar_types() {
        assert_eq!(
            hint(
                json!({"type": "object", "required": ["s", "i", "n", "b", "z"], "properties": {
            "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
            "b": {"type": "boolean"}, "z": {"type": "null"}}})
            ),
            "{ b: boolean; i: number /* integer */; n: number; s: string; z: null }"
        );
    }

    #[test]
    fn nullable_forms() {
        assert_eq!(
            hint(json!({"type": "string", "nullable": true})),
            "string | null"
        );
        assert_eq!(hint(json!({"type": ["string", "null"]})), "string | null");
        assert_eq!(
            hint(json!({"type": ["integer", "number"]})),
            "number /* integer */ | number"
        );
        assert_eq!(hint(json!({"type": "null", "nullable": true})), "null");
    }

    #[test]
    fn const_and_literals() {
        assert_eq!(hint(json!({"const": "fixed"})), r#""fixed""#);
        assert_eq!(hint(json!({"const": 3})), "3");
        assert_eq!(
            hint(json!({"enum": ["a", 1, true, null]})),
            r#""a" | 1 | true | null"#
        );
        assert_eq!(hint(json!({"enum": []})), "never");
        // Over-long or structured literals print as their type.
        assert_eq!(hint(json!({"const": "x".repeat(200)})), "string");
        assert_eq!(hint(json!({"const": {"a": 1}})), "object");
    }

    #[test]
    fn enum_is_capped_at_eight_values() {
        let values: Vec<String> = (0..9).map(|i| format!("v{i}")).collect();
        assert_eq!(
            hint(json!({"enum": values})),
            r#""v0" | "v1" | "v2" | "v3" | "v4" | "v5" | "v6" | "v7" | ..."#
        );
        let huge: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
        assert_eq!(
            hint(json!({"enum": huge})),
            "0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | ..."
        );
    }

    #[test]
    fn any_of_one_of_all_of() {
        assert_eq!(
            hint(json!({"oneOf": [{"type": "string"}, {"type": "integer"}]})),
            "string | number /* integer */"
        );
        assert_eq!(
            hint(json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"b": {"type": "number"}}}]})),
            "{ a?: string } & { b?: number }"
        );
        // Constraint-only branches next to a typed object are not shapes.
        assert_eq!(
            hint(
                json!({"type": "object", "properties": {"a": {"type": "string"}},
                    "anyOf": [{"required": ["a"]}, {"required": ["b"]}]})
            ),
            "{ a?: string }"
        );
    }

    #[test]
    fn arrays_tuples_and_maps() {
        assert_eq!(hint(json!({"type": "array"})), "unknown[]");
        assert_eq!(
            hint(json!({"type": "array", "items": {"type": ["string", "number"]}})),
            "(string | number)[]"
        );
        assert_eq!(
            hint(json!({"type": "array", "items": {"anyOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"b": {"type": "number"}}}]}})),
            "({ a?: string } | { b?: number })[]"
        );
        assert_eq!(
            hint(json!({"type": "array", "items": [{"type": "string"}, {"type": "integer"}]})),
            "[string, number /* integer */]"
        );
        assert_eq!(
            hint(
                json!({"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}})
            ),
            "boolean[][]"
        );
        assert_eq!(
            hint(json!({"type": "object", "additionalProperties": {"type": "number"}})),
            "Record<string, number>"
        );
    }

    #[test]
    fn local_refs_are_followed_and_cycles_stop() {
        let schema = json!({"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/$defs/A"}, "b": {"$ref": "#/definitions/B"}},
        "$defs": {"A": {"enum": ["x", "y"]}}, "definitions": {"B": {"type": "integer"}}});
        assert_eq!(
            hint(schema),
            r#"{ a: "x" | "y"; b?: number /* integer */ }"#
        );
        assert_eq!(hint(json!({"$ref": "#"})), "unknown");
        assert_eq!(
            hint(json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}})),
            "unknown"
        );
        // A recursive tree stops at depth 4.
        assert_eq!(
            hint(json!({"type": "object", "properties": {"child": {"$ref": "#"}}})),
            "{ child?: { child?: { child?: { child?: object } } } }"
        );
        assert_eq!(
            hint(json!({"type": "object", "properties": {"a": {"$ref": "http://example.com/x"}}})),
            "{ a?: unknown }"
        );
        assert_eq!(
            hint(json!({"type": "object", "properties": {"a": {"$ref": "#/nope"}}})),
            "{ a?: unknown }"
        );
    }

    #[test]
    fn depth_is_capped_at_four() {
        assert_eq!(
            hint(nested_schema(3)),
            "{ child?: { child?: { child?: string } } }"
        );
        assert_eq!(
            hint(nested_schema(5)),
            "{ child?: { child?: { child?: { child?: object } } } }"
        );
        assert_eq!(
            hint(nested_schema(120)),
            "{ child?: { child?: { child?: { child?: object } } } }"
        );
        let arrays = json!({"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}}}});
        assert_eq!(hint(arrays), "unknown[][][][][]");
    }

    #[test]
    fn properties_are_capped_at_sixteen() {
        let text = hint(wide_schema(17, true));
        assert!(text.ends_with("; ... }"), "{text}");
        assert_eq!(text.matches(": string").count(), 16, "{text}");
        assert!(text.starts_with("{ p0: string; p1: string;"), "{text}");
        let sixteen = hint(wide_schema(16, false));
        assert!(!sixteen.contains("..."), "{sixteen}");
        assert!(sixteen.starts_with("{ p0?: string;"), "{sixteen}");
    }

    #[test]
    fn ten_thousand_properties_stay_bounded() {
        let text = hint(wide_schema(10_000, true));
        assert!(text.len() <= INPUT_HINT_MAX_CHARS);
        assert!(text.ends_with("; ... }"), "{text}");
    }

    #[test]
    fn char_budget_cuts_with_marker() {
        let mut props = serde_json::Map::new();
        for i in 0..12 {
            props.insert(
                format!("a_rather_long_parameter_name_{i:02}"),
                json!({"type": "string"}),
            );
        }
        let text = hint(json!({"type": "object", "properties": props}));
        assert!(text.len() <= INPUT_HINT_MAX_CHARS, "{} chars", text.len());
        assert!(text.ends_with("; ... }"), "{text}");
        assert!(
            text.starts_with("{ a_rather_long_parameter_name_00?: string; "),
            "{text}"
        );
        // Budget also holds inside nesting and unions.
        let values: Vec<String> = (0..8).map(|i| format!("{i}{}", "z".repeat(35))).collect();
        let mut props = serde_json::Map::new();
        for i in 0..4 {
            props.insert(
                format!("k{i}"),
                json!({"type": "object", "properties": {"inner": {"enum": values}}}),
            );
        }
        let text = hint(json!({"type": "object", "properties": props}));
        assert!(
            text.len() <= INPUT_HINT_MAX_CHARS,
            "{} chars: {text}",
            text.len()
        );
        assert!(text.contains("..."), "{text}");
    }

    #[test]
    fn weird_keys_are_quoted_when_needed() {
        let schema = json!({"type": "object", "required": ["__proto__", "a-b", 7], "properties": {
        "__proto__": {"type": "string"}, "a-b": {"type": "string"}, "with \"quote\"": {"type": "number"},
        "$ok": {"type": "boolean"}, "": {"type": "string"}, "constructor": {"type": "string"}}});
        assert_eq!(
            hint(schema),
            r#"{ __proto__: string; "a-b": string; ""?: string; $ok?: boolean; constructor?: string; "with \"quote\""?: number }"#
        );
    }

    #[test]
    fn property_order_is_required_first_then_by_name() {
        let one: Value = serde_json::from_str(
        r#"{"type": "object", "required": ["zeta", "beta"], "properties": {"zeta": {"type": "string"}, "alpha": {"type": "number"}, "beta": {"type": "boolean"}, "gamma": {"type": "string"}}}"#,
    ).unwrap();
        let other: Value = serde_json::from_str(
        r#"{"properties": {"gamma": {"type": "string"}, "beta": {"type": "boolean"}, "alpha": {"type": "number"}, "zeta": {"type": "string"}}, "required": ["beta", "zeta"], "type": "object"}"#,
    ).unwrap();
        assert_eq!(
            hint(one.clone()),
            "{ beta: boolean; zeta: string; alpha?: number; gamma?: string }"
        );
        assert_eq!(hint(one), hint(other));
        // The 16-property cut keeps the first 16 in that order, required ones first.
        let mut wide = wide_schema(20, false);
        wide["required"] = json!(["p19"]);
        let text = hint(wide);
        assert!(
            text.starts_with("{ p19: string; p0?: string; p1?: string; p10?: string;"),
            "{text}"
        );
        assert!(text.ends_with("; ... }"), "{text}");
    }

    #[test]
    fn required_keys_without_properties_are_not_an_empty_object() {
        assert_eq!(
            hint(json!({"type": "object", "required": ["path", "mode"]})),
            "{ mode: unknown; path: unknown }"
        );
        assert_eq!(
            hint(
                json!({"type": "object", "required": ["id"], "additionalProperties": {"type": "string"}})
            ),
            "{ id: string }"
        );
        // Nested, too.
        assert_eq!(
            hint(
                json!({"type": "object", "required": ["opts"], "properties": {"opts": {"type": "object", "required": ["x"]}}})
            ),
            "{ opts: { x: unknown } }"
        );
    }

    #[test]
    fn input_hints_carry_numeric_constraints() {
        let schema = json!({"type": "object", "required": ["count"], "properties": {
        "count": {"type": "integer", "minimum": 0, "maximum": 10},
        "page": {"type": "integer"},
        "ratio": {"type": "number", "exclusiveMinimum": 0},
        "list": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "maybe": {"type": ["integer", "null"], "minimum": 1},
        "nested": {"type": "object", "properties": {
            "n": {"type": "integer", "nullable": true, "minimum": 0},
            "m": {"anyOf": [{"type": "number", "maximum": 1}, {"type": "null"}]}}}}});
        assert_eq!(
        hint(schema),
        "{ count: number /* integer, >= 0, <= 10 */; list?: (number /* integer, >= 0 */)[]; maybe?: number /* integer, >= 1 */ | null; \
         nested?: { m?: number /* <= 1 */ | null; n?: number /* integer, >= 0 */ | null }; page?: number /* integer */; \
         ratio?: number /* > 0 */ }"
    );
        // Draft 4's boolean exclusive bounds; a fractional bound.
        assert_eq!(
            hint(json!({"type": "object", "properties": {
            "s": {"type": "number", "minimum": 1, "exclusiveMinimum": true}, "t": {"type": "number", "maximum": 2.5, "exclusiveMaximum": true}}})),
            "{ s?: number /* > 1 */; t?: number /* < 2.5 */ }"
        );
        // A plain number carries nothing.
        assert_eq!(
            hint(json!({"type": "object", "properties": {"x": {"type": "number"}}})),
            "{ x?: number }"
        );
    }

    #[test]
    fn numeric_constraints_are_charged_to_the_hint_budget() {
        // Sixteen bounded integers do not fit 300 chars: cut with `...`, never over budget,
        // and no property is shown without its constraints.
        let mut props = serde_json::Map::new();
        for i in 0..16 {
            props.insert(
                format!("p{i:02}"),
                json!({"type": "integer", "minimum": -1_000_000, "maximum": 1_000_000}),
            );
        }
        let text = hint(json!({"type": "object", "properties": props}));
        assert_eq!(
        text,
        "{ p00?: number /* integer, >= -1000000, <= 1000000 */; p01?: number /* integer, >= -1000000, <= 1000000 */; \
         p02?: number /* integer, >= -1000000, <= 1000000 */; p03?: number /* integer, >= -1000000, <= 1000000 */; \
         p04?: number /* integer, >= -1000000, <= 1000000 */; ... }"
    );
        assert!(text.len() <= INPUT_HINT_MAX_CHARS, "{} chars", text.len());
    }

    #[test]
    fn output_hints_never_carry_numeric_constraints() {
        let schema = json!({"type": "object", "additionalProperties": false, "required": ["n"], "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 10}, "m": {"type": ["number", "null"], "exclusiveMinimum": 0}}});
        assert_eq!(
            output_hint(&schema).as_deref(),
            Some("{ n: number; m?: number | null }")
        );
    }

    #[test]
    fn output_is_deterministic() {
        let schema = wide_schema(40, false);
        assert_eq!(hint(schema.clone()), hint(schema));
    }

    // ---- output hints ----

    /// A closed object schema (`additionalProperties: false`) of `properties`.
    fn closed(properties: Value, required: &[&str]) -> Value {
        json!({"type": "object", "additionalProperties": false, "properties": properties, "required": required})
    }

    #[test]
    fn output_hint_renders_complete_object_schemas() {
        let schema = closed(
            json!({"ok": {"type": "boolean"}, "items": {"type": "array", "items": closed(json!({"id": {"type": "string"}}), &[])}}),
            &["ok"],
        );
        assert_eq!(
            output_hint(&schema).as_deref(),
            Some("{ ok: boolean; items?: { id?: string }[] }")
        );
        // No `type` but properties: still an object schema.
        assert_eq!(
            output_hint(
                &json!({"properties": {"n": {"type": "integer"}}, "additionalProperties": false})
            )
            .as_deref(),
            Some("{ n?: number }")
        );
        // A map of typed values is complete; an annotation-only leaf is `unknown`.
        let map = closed(
            json!({"tags": {"type": "object", "additionalProperties": {"type": "string"}}, "raw": {"description": "any JSON"}}),
            &[],
        );
        assert_eq!(
            output_hint(&map).as_deref(),
            Some("{ raw?: unknown; tags?: Record<string, string> }")
        );
    }

    #[test]
    fn output_hint_is_none_for_open_objects() {
        // No `additionalProperties: false`: the result may carry fields the hint cannot name.
        assert_eq!(
            output_hint(&json!({"type": "object", "properties": {"a": {"type": "string"}}})),
            None
        );
        assert_eq!(
            output_hint(
                &json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true})
            ),
            None
        );
        // Open inside a closed one.
        let nested = closed(
            json!({"inner": {"type": "object", "properties": {"x": {"type": "string"}}}}),
            &[],
        );
        assert_eq!(output_hint(&nested), None);
        let open_map = closed(json!({"meta": {"type": "object"}}), &[]);
        assert_eq!(output_hint(&open_map), None);
        // Requiring a field it does not declare.
        assert_eq!(
            output_hint(&closed(json!({"a": {"type": "string"}}), &["a", "b"])),
            None
        );
    }

    #[test]
    fn output_hint_is_none_for_a_constrained_untyped_leaf() {
        for leaf in [
            json!({"pattern": "^[a-z]+$"}),
            json!({"minimum": 0}),
            json!({"format": "date-time"}),
            json!({"not": {"type": "null"}}),
        ] {
            assert_eq!(
                output_hint(&closed(json!({ "v": leaf }), &["v"])),
                None,
                "{leaf}"
            );
        }
        assert_eq!(
            output_hint(&closed(json!({"v": {"title": "Value"}}), &["v"])).as_deref(),
            Some("{ v: unknown }")
        );
    }

    #[test]
    fn output_hint_is_none_for_roots_it_cannot_show() {
        assert_eq!(output_hint(&json!({"type": "string"})), None);
        assert_eq!(output_hint(&json!({"type": "object"})), None);
        assert_eq!(
            output_hint(&json!({"type": "object", "properties": {}})),
            None
        );
        assert_eq!(output_hint(&json!({"type": "array"})), None);
        assert_eq!(
            output_hint(&json!({"anyOf": [{"type": "string"}, {"type": "number"}]})),
            None
        );
        assert_eq!(output_hint(&json!(true)), None);
        assert_eq!(output_hint(&json!(5)), None);
        // allOf: the intersection of closed objects is not their merged fields.
        let all_of = json!({"allOf": [closed(json!({"a": {"type": "string"}}), &[]), closed(json!({"b": {"type": "string"}}), &[])]});
        assert_eq!(output_hint(&closed(json!({"x": all_of}), &[])), None);
    }

    #[test]
    fn output_hint_for_array_roots() {
        let schema = json!({"type": "array", "items": closed(json!({"name": {"type": "string"}, "id": {"type": "string"}}), &["id"])});
        assert_eq!(
            output_hint(&schema).as_deref(),
            Some("Array<{ id: string; name?: string }>")
        );
        assert_eq!(
            output_hint(&json!({"type": "array", "items": {"type": "string"}})).as_deref(),
            Some("Array<string>")
        );
        // Cut items: no hint.
        assert_eq!(
            output_hint(&json!({"type": "array", "items": closed_wide(17)})),
            None
        );
    }

    #[test]
    fn output_hint_for_nullable_scalars_and_enums() {
        assert_eq!(
            output_hint(&json!({"type": ["string", "null"]})).as_deref(),
            Some("string | null")
        );
        assert_eq!(
            output_hint(&json!({"type": "integer", "nullable": true})).as_deref(),
            Some("number | null")
        );
        assert_eq!(
            output_hint(&json!({"anyOf": [{"type": "boolean"}, {"type": "null"}]})).as_deref(),
            Some("boolean | null")
        );
        assert_eq!(
            output_hint(&json!({"enum": ["ok", "failed", null]})).as_deref(),
            Some(r#""ok" | "failed" | null"#)
        );
        assert_eq!(
            output_hint(&json!({"type": "string", "enum": ["a", "b"]})).as_deref(),
            Some(r#""a" | "b""#)
        );
        assert_eq!(output_hint(&json!({"type": ["string", "object"]})), None);
        let nested = closed(
            json!({"note": {"type": "string", "nullable": true}}),
            &["note"],
        );
        assert_eq!(
            output_hint(&nested).as_deref(),
            Some("{ note: string | null }")
        );
    }

    #[test]
    fn output_hint_shows_up_to_eight_literals_and_five_variants() {
        let values = |n: usize| (0..n).map(|i| format!("v{i}")).collect::<Vec<_>>();
        assert_eq!(
            output_hint(&closed(json!({"e": {"enum": values(8)}}), &["e"])).as_deref(),
            Some(r#"{ e: "v0" | "v1" | "v2" | "v3" | "v4" | "v5" | "v6" | "v7" }"#)
        );
        assert_eq!(
            output_hint(&closed(json!({"e": {"enum": values(9)}}), &["e"])),
            None
        );
        let consts: Vec<Value> = values(8)
            .into_iter()
            .map(|v| json!({ "const": v }))
            .collect();
        assert!(output_hint(&closed(json!({ "c": { "oneOf": consts } }), &["c"])).is_some());
        let scalars = |n: usize| -> Vec<Value> {
            ["string", "number", "boolean", "null"]
                .iter()
                .map(|t| json!({ "type": t }))
                .chain((0..).map(|i| json!({"const": i})))
                .take(n)
                .collect()
        };
        assert_eq!(
            output_hint(&closed(json!({"u": {"anyOf": scalars(5)}}), &["u"])).as_deref(),
            Some("{ u: string | number | boolean | null | 0 }")
        );
        assert_eq!(
            output_hint(&closed(json!({"u": {"anyOf": scalars(6)}}), &["u"])),
            None
        );
        assert_eq!(
            output_hint(&closed(
                json!({"t": {"type": ["string", "number", "boolean", "null", "array", "object"]}}),
                &["t"]
            )),
            None
        );
    }

    #[test]
    fn output_hint_orders_required_then_optional_whatever_the_key_order() {
        let a: Value = serde_json::from_str(
        r#"{"type":"object","additionalProperties":false,"required":["z","b"],"properties":{"z":{"type":"string"},"y":{"type":"number"},"b":{"type":"boolean"},"a":{"type":"string"}}}"#,
    )
    .unwrap();
        let b: Value = serde_json::from_str(
        r#"{"properties":{"a":{"type":"string"},"b":{"type":"boolean"},"y":{"type":"number"},"z":{"type":"string"}},"required":["b","z"],"additionalProperties":false,"type":"object"}"#,
    )
    .unwrap();
        assert_eq!(
            output_hint(&a).as_deref(),
            Some("{ b: boolean; z: string; a?: string; y?: number }")
        );
        assert_eq!(output_hint(&a), output_hint(&b));
    }

    #[test]
    fn output_hint_for_unions_of_up_to_five_objects() {
        let variant = |key: &str| closed(json!({ key: {"type": "string"} }), &[key]);
        let two = json!({"oneOf": [variant("ok"), {"$ref": "#/$defs/E"}], "$defs": {"E": variant("error")}});
        assert_eq!(
            output_hint(&two).as_deref(),
            Some("{ ok: string } | { error: string }")
        );
        let with_null = json!({"anyOf": [variant("a"), {"type": "null"}]});
        assert_eq!(
            output_hint(&with_null).as_deref(),
            Some("{ a: string } | null")
        );
        let five: Vec<Value> = (0..5).map(|i| variant(&format!("k{i}"))).collect();
        assert!(output_hint(&json!({"anyOf": five})).is_some());
        let six: Vec<Value> = (0..6).map(|i| variant(&format!("k{i}"))).collect();
        assert_eq!(output_hint(&json!({"anyOf": six})), None);
        assert_eq!(
            output_hint(&json!({"anyOf": [variant("a"), {"type": "string"}]})),
            None
        );
        // An open variant: no hint.
        assert_eq!(
            output_hint(
                &json!({"anyOf": [variant("a"), {"type": "object", "properties": {"b": {"type": "string"}}}]})
            ),
            None
        );
    }

    #[test]
    fn output_hint_is_none_for_a_closed_object_with_a_union() {
        // The real shape is "a or b", not the merged property list.
        let schema = json!({"type": "object", "additionalProperties": false,
        "properties": {"a": {"type": "string"}, "b": {"type": "number"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}]});
        assert_eq!(output_hint(&schema), None);
        let shaped = json!({"type": "object", "additionalProperties": false, "properties": {"a": {"type": "string"}},
        "anyOf": [closed(json!({"x": {"type": "string"}}), &[])]});
        assert_eq!(output_hint(&shaped), None);
        // Nested too.
        let mut inner = schema.clone();
        inner["oneOf"] = json!([{"required": ["a"]}]);
        assert_eq!(output_hint(&closed(json!({ "inner": inner }), &[])), None);
    }

    /// [`wide_schema`] closed: `count` optional string properties.
    fn closed_wide(count: usize) -> Value {
        let mut schema = wide_schema(count, false);
        schema["additionalProperties"] = json!(false);
        schema
    }

    #[test]
    fn output_hint_is_none_when_it_would_be_cut() {
        assert_eq!(output_hint(&closed_wide(17)), None);
        assert!(output_hint(&closed_wide(16)).is_some());
        assert_eq!(output_hint(&nested_schema(6)), None);
        assert_eq!(
            output_hint(&closed(json!({"a": {"$ref": "http://example.com/x"}}), &[])),
            None
        );
        // Over the 850-char budget.
        let mut props = serde_json::Map::new();
        for i in 0..16 {
            props.insert(
                format!("a_rather_long_output_field_name_{i:02}_{}", "x".repeat(20)),
                json!({"type": "string"}),
            );
        }
        assert_eq!(
            output_hint(&json!({"properties": props, "additionalProperties": false})),
            None
        );
    }
}

pub(crate) mod hostile {
    //! Hostile schemas across every entry point: must return, never panic.

    use serde_json::{json, Value};

    use super::{nested_schema, wide_schema};
    use crate::error::ErrorCode;
    use crate::schema::{input_hint, output_hint, schema_cost, validate_args, CostError};

    fn hostile_schemas() -> Vec<Value> {
        let huge_enum: Vec<Value> = (0..50_000).map(|i| json!(format!("value-{i}"))).collect();
        vec![
            nested_schema(120),
            json!({"$ref": "#"}),
            json!({"$ref": "http://example.com/x"}),
            json!({"type": "object", "properties": {"a": {"$ref": "#"}}, "required": ["a"]}),
            json!({"enum": huge_enum}),
            wide_schema(10_000, true),
            json!(true),
            json!(false),
            json!(12),
            json!("object"),
            json!(null),
            json!([{"type": "string"}]),
            json!({"type": "object", "properties": {"__proto__": {"type": "string"}, "constructor": {"$ref": "#/properties/__proto__"}}}),
            json!({"type": ["object", 5, null], "properties": [1, 2], "required": "a", "items": 3, "anyOf": {}, "allOf": []}),
            json!({"$ref": "#/a/b", "a": {"b": {"$ref": "#/a/b"}}}),
            json!({"$ref": "#%ZZ"}),
        ]
    }

    #[test]
    fn every_entry_point_survives_hostile_schemas() {
        for schema in hostile_schemas() {
            let text = input_hint(Some(&schema));
            assert!(text.len() <= crate::limits::INPUT_HINT_MAX_CHARS, "{text}");
            if let Some(out) = output_hint(&schema) {
                assert!(out.len() <= crate::limits::OUTPUT_HINT_MAX_CHARS);
            }
            match validate_args(&schema, &json!({"a": 1})) {
                Ok(issues) => assert!(issues.len() <= crate::schema::MAX_ISSUES),
                Err(err) => assert_eq!(err.code, ErrorCode::InvalidSchema, "{schema:.80}: {err}"),
            }
        }
    }

    /// The issue's schema: `$defs` where each level is `anyOf` of two refs to the
    /// next, `depth` levels (2^depth checks of one value on the old validator).
    pub(crate) fn fanout_schema(depth: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for level in 0..depth {
            let next = format!("#/$defs/d{}", level + 1);
            defs.insert(
                format!("d{level}"),
                json!({ "anyOf": [{ "$ref": next }, { "$ref": next }] }),
            );
        }
        defs.insert(format!("d{depth}"), json!({ "type": "string" }));
        json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/d0" } }, "$defs": defs })
    }

    fn too_expensive(schema: &Value) -> String {
        match schema_cost(schema) {
            Err(CostError::TooExpensive(why)) => why,
            other => panic!("expected TooExpensive for {schema:.120}, got {other:?}"),
        }
    }

    #[test]
    fn ref_fanout_is_rejected_by_the_cost_analysis() {
        for depth in [20, 21, 30] {
            let schema = fanout_schema(depth);
            let why = too_expensive(&schema);
            assert!(
                why.starts_with("too expensive to validate: up to "),
                "{why}"
            );
            assert!(
                why.contains("subschema checks per value (limit 1000)"),
                "{why}"
            );
            // validate_args refuses it before compiling (the old validator ran 2^depth checks).
            let err = validate_args(&schema, &json!({"x": 1})).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidSchema);
            assert!(
                err.message
                    .starts_with("Invalid input schema: too expensive to validate"),
                "{err}"
            );
        }
        // Exact bound at `x`: level k applies itself, two `$ref` holders and the
        // next level twice (3 + 2 * next), the leaf 1: 2^(depth + 2) - 3 at level
        // 0, plus the property schema holding the first $ref.
        assert_eq!(schema_cost(&fanout_schema(3)).unwrap().checks_per_value, 30);
        assert_eq!(
            schema_cost(&fanout_schema(7)).unwrap().checks_per_value,
            510
        );
        too_expensive(&fanout_schema(8));
    }

    /// A tree: `children` items are the whole schema again (recursion that
    /// descends one value per level).
    pub(crate) fn tree_schema() -> Value {
        json!({"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#"}},
        "parent": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}})
    }

    #[test]
    fn descending_recursion_is_accepted_and_validates() {
        let cost = schema_cost(&tree_schema()).unwrap();
        assert!(cost.checks_per_value <= 4, "{cost:?}");
        let mut args = json!({"name": "leaf"});
        for level in 0..15 {
            args = json!({"name": format!("n{level}"), "children": [args, {"name": 5}], "parent": null});
        }
        let issues = validate_args(&tree_schema(), &args).unwrap();
        assert_eq!(issues.len(), 15, "{issues:?}");
        // Definitions the usual generators emit (pydantic `$defs`, zod `definitions`).
        let linked = json!({"$ref": "#/definitions/Node", "definitions": {"Node": {"type": "object", "properties": {
        "value": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#/definitions/Node"}, {"type": "null"}]}}}}});
        assert!(schema_cost(&linked).unwrap().checks_per_value <= 4);
        assert_eq!(
            validate_args(
                &linked,
                &json!({"value": 1, "next": {"value": "x", "next": null}})
            )
            .unwrap()
            .len(),
            1
        );
    }

    #[test]
    fn fanout_through_nested_values_is_rejected() {
        // Each level applies the root twice to the same child: 2^depth at depth `depth`.
        let doubling = json!({"type": "object", "properties": {"a": {"allOf": [{"$ref": "#"}, {"$ref": "#"}]}}});
        too_expensive(&doubling);
        // A key matched by `properties` and `patternProperties` gets both.
        let both =
            json!({"properties": {"a": {"$ref": "#"}}, "patternProperties": {"^a": {"$ref": "#"}}});
        too_expensive(&both);
        // ...but `additionalProperties` only applies to keys nothing else matched.
        let exclusive =
            json!({"properties": {"a": {"$ref": "#"}}, "additionalProperties": {"$ref": "#"}});
        // (the `$ref` holder and the root it applies: 2 at every level)
        assert_eq!(schema_cost(&exclusive).unwrap().checks_per_value, 2);
    }

    #[test]
    fn in_place_ref_cycles_are_rejected() {
        for schema in [
            json!({"anyOf": [{"$ref": "#"}, {"type": "string"}]}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"not": {"$ref": "#/$defs/a"}}}}),
        ] {
            let why = too_expensive(&schema);
            assert!(why.contains("$ref cycle"), "{why}");
        }
        // The validator drops a self-reference, so this one stays accepted.
        assert!(schema_cost(&json!({"$ref": "#"})).is_ok());
    }

    #[test]
    fn fanout_hidden_behind_anchors_and_ids_is_found() {
        let mut anchors = serde_json::Map::new();
        let mut resources = serde_json::Map::new();
        for level in 0..20 {
            anchors.insert(
                format!("d{level}"),
                json!({"$anchor": format!("a{level}"),
            "anyOf": [{"$ref": format!("#a{}", level + 1)}, {"$ref": format!("#a{}", level + 1)}]}),
            );
            resources.insert(format!("d{level}"), json!({"$id": format!("https://example.com/r{level}.json"),
            "anyOf": [{"$ref": format!("r{}.json", level + 1)}, {"$ref": format!("r{}.json#", level + 1)}]}));
        }
        anchors.insert("d20".into(), json!({"$anchor": "a20", "type": "string"}));
        resources.insert(
            "d20".into(),
            json!({"$id": "https://example.com/r20.json", "type": "string"}),
        );
        too_expensive(&json!({"$defs": anchors, "$ref": "#a0"}));
        too_expensive(
            &json!({"$id": "https://example.com/root.json", "$defs": resources, "$ref": "r0.json"}),
        );
        // A reference nothing in the document answers is left to the compiler
        // (which works offline and fails it).
        assert!(matches!(
            schema_cost(&json!({"$ref": "https://example.com/x.json"})),
            Err(CostError::Unfollowable(_))
        ));
        // Meta-schemas are bundled with the validator.
        assert!(schema_cost(
            &json!({"properties": {"schema": {"$ref": "http://json-schema.org/draft-07/schema#"}}})
        )
        .is_ok());
    }

    #[test]
    fn arguments_beyond_the_validation_budget_are_refused() {
        // 7 levels: 510 checks per value, so 1960 values fit the budget.
        let mut schema = fanout_schema(7);
        schema["properties"] = json!({"items": {"type": "array", "items": {"$ref": "#/$defs/d0"}}});
        let compiled = crate::schema::CompiledSchema::compile(&schema).unwrap();
        let small: Vec<Value> = (0..100).map(|i| json!(format!("s{i}"))).collect();
        assert!(compiled.validate(&json!({"items": small})).is_empty());
        let large: Vec<Value> = (0..5_000).map(|i| json!(format!("s{i}"))).collect();
        let issues = compiled.validate(&json!({"items": large}));
        assert_eq!(issues.len(), 1);
        assert!(
            issues[0].message.starts_with(
                "Arguments too large to validate against this schema: 5002 JSON values"
            ),
            "{issues:?}"
        );
        // Invalid arguments beyond the report budget: the first issue only.
        let failing = json!({"items": vec![1; 1_000]});
        assert_eq!(compiled.validate(&failing).len(), 1);
        let few = json!({"items": vec![1; 3]});
        assert_eq!(compiled.validate(&few).len(), 3);
        // A cheap schema takes far larger arguments.
        let cheap = crate::schema::CompiledSchema::compile(
            &json!({"type": "array", "items": {"type": "string"}}),
        )
        .unwrap();
        let many: Vec<Value> = (0..50_000).map(|i| json!(format!("s{i}"))).collect();
        assert!(cheap.validate(&Value::Array(many)).is_empty());
        assert_eq!(cheap.validate(&json!(vec![1; 50_000])).len(), 1);
        assert_eq!(
            cheap.validate(&json!(vec![1; 100])).len(),
            crate::schema::MAX_ISSUES
        );
    }

    #[test]
    fn catastrophic_patterns_fail_the_value_instead_of_running_on() {
        // A back-reference forces the backtracking engine; nested quantifiers
        // make it exponential in the input length.
        let schema = json!({"type": "string", "pattern": "^(a|a)*\\1b$"});
        let issues = validate_args(&schema, &json!("a".repeat(40))).unwrap();
        assert_eq!(issues.len(), 1, "{issues:?}");
        // Plain patterns (no look-around or back-reference) stay exact.
        let plain = json!({"type": "string", "pattern": "^(a+)+$"});
        assert!(validate_args(&plain, &json!("a".repeat(10_000)))
            .unwrap()
            .is_empty());
        assert_eq!(
            validate_args(&plain, &json!(format!("{}b", "a".repeat(10_000))))
                .unwrap()
                .len(),
            1
        );
    }

    /// Tool schemas as the wild writes them (the 13k-tool dev catalog): none is
    /// too expensive. Prints the distribution of the bound.
    #[test]
    fn dev_catalog_schemas_are_not_rejected() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../bench/data/retrieval-dev/catalog.jsonl");
        let text = std::fs::read_to_string(&path).expect("dev catalog");
        let (mut schemas, mut rejected, mut worst) = (0usize, Vec::new(), 0u64);
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let record: Value = serde_json::from_str(line).unwrap();
            for key in ["inputSchema", "outputSchema"] {
                let Some(schema) = record.get(key).filter(|s| s.is_object()) else {
                    continue;
                };
                schemas += 1;
                match schema_cost(schema) {
                    Ok(cost) => worst = worst.max(cost.checks_per_value),
                    Err(err) => rejected.push(format!("{}: {}", record["id"], err.reason())),
                }
            }
        }
        println!(
            "dev catalog: {schemas} schemas, {} rejected, worst bound {worst} checks per value",
            rejected.len()
        );
        assert!(schemas > 4_000);
        assert!(rejected.is_empty(), "{rejected:?}");
    }

    /// The shortcut the catalog takes for most schemas agrees with the analysis:
    /// a schema it passes as a tree is within the bound, with no more checks per
    /// value than it has values; schemas with references always get the analysis.
    #[test]
    fn a_small_schema_without_references_is_within_the_bound() {
        use crate::schema::within_bound_as_a_tree;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../bench/data/retrieval-dev/catalog.jsonl");
        let text = std::fs::read_to_string(path).unwrap();
        let mut passed = 0;
        for line in text.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let Some(schema) = record.get("inputSchema") else {
                continue;
            };
            if within_bound_as_a_tree(schema) {
                passed += 1;
                let values = crate::schema::measure(schema, 64, usize::MAX)
                    .unwrap()
                    .values;
                let cost = schema_cost(schema).expect("within the bound");
                assert!(cost.checks_per_value <= values, "{schema}");
            }
        }
        assert!(passed > 4_000, "{passed}");
        assert!(!within_bound_as_a_tree(&fanout_schema(1)));
        assert!(!within_bound_as_a_tree(
            &json!({ "$ref": "#/$defs/a", "$defs": { "a": {} } })
        ));
        assert!(!within_bound_as_a_tree(
            &json!({ "properties": { "a": { "$dynamicRef": "#x" } } })
        ));
        // A wide anyOf without references: passes only while small.
        let wide =
            json!({ "anyOf": (0..2000).map(|i| json!({ "minimum": i })).collect::<Vec<_>>() });
        assert!(!within_bound_as_a_tree(&wide));
    }
}

mod validate {
    //! `validate_args` and `CompiledSchema`: argument issues.

    use serde_json::{json, Value};

    use super::{nested_schema, wide_schema};
    use crate::error::ErrorCode;
    use crate::schema::{validate_args, ArgumentIssue, CompiledSchema, MAX_ISSUES};

    fn issues(schema: Value, args: Value) -> Vec<ArgumentIssue> {
        validate_args(&schema, &args).expect("schema compiles")
    }

    fn messages(schema: Value, args: Value) -> Vec<String> {
        issues(schema, args)
            .into_iter()
            .map(|i| i.message)
            .collect()
    }

    fn address_schema() -> Value {
        json!({"type": "object", "required": ["marker", "address"], "additionalProperties": false, "properties": {
        "marker": {"type": "string"},
        "mode": {"enum": ["drip", "flood"]},
        "zip_code": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {"type": "object", "required": ["city"], "additionalProperties": false, "properties": {
            "city": {"type": "string"}, "street": {"type": "string"}}}}})
    }

    #[test]
    fn valid_args_have_no_issues() {
        assert!(issues(
            address_schema(),
            json!({"marker": "m", "address": {"city": "Paris"}, "tags": ["a"]})
        )
        .is_empty());
    }

    #[test]
    fn missing_required_property() {
        let found = issues(address_schema(), json!({"address": {"city": "Paris"}}));
        assert_eq!(
            found,
            vec![ArgumentIssue {
                path: String::new(),
                message: r#"Missing required property "marker"."#.into(),
                suggestion: None
            }]
        );
    }

    #[test]
    fn wrong_type_names_both_types() {
        assert_eq!(
            messages(
                json!({"type": "object", "properties": {"city": {"type": "string"}}}),
                json!({"city": 5})
            ),
            vec![r#"Property "city" must be a string, got number."#]
        );
        assert_eq!(
            messages(json!({"type": "object"}), json!([1])),
            vec!["Arguments must be an object, got array."]
        );
        assert_eq!(
            messages(
                json!({"properties": {"n": {"type": ["integer", "null"]}}}),
                json!({"n": "x"})
            ),
            vec![r#"Property "n" must be an integer or null, got string."#]
        );
    }

    #[test]
    fn unexpected_property_with_suggestion() {
        let found = issues(
            address_schema(),
            json!({"marker": "m", "address": {"city": "P"}, "mod": "drip"}),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "");
        assert_eq!(
            found[0].message,
            r#"Unexpected property "mod". Did you mean: mode?"#
        );
        assert_eq!(found[0].suggestion.as_deref(), Some("mode"));
    }

    #[test]
    fn nested_paths_are_json_pointers() {
        // Validator order: additionalProperties is checked before required.
        let found = issues(
            address_schema(),
            json!({"marker": "m", "address": {"cty": "Paris"}}),
        );
        assert_eq!(
        found,
        vec![
            ArgumentIssue {
                path: "/address".into(),
                message: r#"Unexpected property "cty" at /address. Did you mean: city?"#.into(),
                suggestion: Some("city".into()),
            },
            ArgumentIssue {
                path: "/address".into(),
                message: r#"Missing required property "city" at /address. Found "cty"; did you mean: city?"#.into(),
                suggestion: Some("city".into()),
            },
        ]
    );
        let found = issues(
            address_schema(),
            json!({"marker": "m", "address": {"city": 5}, "tags": ["a", 2]}),
        );
        let paths: Vec<&str> = found.iter().map(|i| i.path.as_str()).collect();
        // Issues follow the order of the arguments object.
        assert_eq!(paths, vec!["/address/city", "/tags/1"]);
        assert_eq!(
            found[1].message,
            "Value at /tags/1 must be a string, got number."
        );
        assert_eq!(
            found[0].message,
            "Value at /address/city must be a string, got number."
        );
    }

    #[test]
    fn suggestions_are_case_and_separator_insensitive() {
        for (wrong, right) in [
            ("Marker", "marker"),
            ("zipCode", "zip_code"),
            ("ZIP-CODE", "zip_code"),
            ("makrer", "marker"),
            ("tag", "tags"),
        ] {
            let found = issues(
                address_schema(),
                json!({"address": {"city": "P"}, wrong: "x"}),
            );
            let unexpected = found
                .iter()
                .find(|i| i.message.starts_with("Unexpected"))
                .expect("unexpected issue");
            assert_eq!(
                unexpected.suggestion.as_deref(),
                Some(right),
                "{wrong}: {found:?}"
            );
            assert!(
                unexpected
                    .message
                    .ends_with(&format!("Did you mean: {right}?")),
                "{found:?}"
            );
        }
        // Nothing close: list the allowed names instead.
        let found = issues(
            address_schema(),
            json!({"marker": "m", "address": {"city": "P"}, "qqqqqqq": 1}),
        );
        assert_eq!(found[0].suggestion, None);
        assert_eq!(
            found[0].message,
            r#"Unexpected property "qqqqqqq". Allowed: marker, mode, zip_code, tags, address."#
        );
        // A name the caller already supplied is not suggested again.
        let found = issues(
            address_schema(),
            json!({"marker": "m", "address": {"city": "P"}, "markers": 1}),
        );
        assert_eq!(found[0].suggestion, None, "{found:?}");
    }

    #[test]
    fn enum_and_const_messages() {
        assert_eq!(
            messages(
                address_schema(),
                json!({"marker": "m", "address": {"city": "P"}, "mode": "trickle"})
            ),
            vec![r#"Property "mode" must be one of: "drip", "flood"; got "trickle"."#]
        );
        assert_eq!(
            messages(
                json!({"properties": {"k": {"const": "fixed"}}}),
                json!({"k": "other"})
            ),
            vec![r#"Property "k" must be "fixed"; got "other"."#]
        );
    }

    #[test]
    fn bad_values_are_quoted_briefly() {
        let long = "y".repeat(5_000);
        let found = messages(
            address_schema(),
            json!({"marker": "m", "address": {"city": "P"}, "mode": long}),
        );
        assert!(found[0].chars().count() < 200, "{}", found[0]);
        assert!(found[0].contains('…'));
        let many: Vec<String> = (0..100).map(|i| format!("opt{i}")).collect();
        let found = messages(
            json!({"properties": {"e": {"enum": many}}}),
            json!({"e": [1, 2, 3]}),
        );
        assert_eq!(
            found,
            vec![
                r#"Property "e" must be one of: "opt0", "opt1", "opt2", "opt3", "opt4", "opt5", "opt6", "opt7", ... (92 more); got an array of 3 items."#
            ]
        );
    }

    #[test]
    fn issues_are_capped() {
        let found = issues(wide_schema(3_000, true), json!({}));
        assert_eq!(found.len(), MAX_ISSUES);
        assert_eq!(found[0].message, r#"Missing required property "p0"."#);
    }

    #[test]
    fn formats_are_not_asserted() {
        let schema = json!({"properties": {"email": {"type": "string", "format": "email"}, "when": {"type": "string", "format": "date-time"}}});
        assert!(issues(schema, json!({"email": "not an email", "when": "soon"})).is_empty());
    }

    #[test]
    fn local_refs_work_and_feed_suggestions() {
        let schema = json!({"type": "object", "properties": {"address": {"$ref": "#/$defs/Address"}},
        "$defs": {"Address": {"type": "object", "additionalProperties": false, "properties": {"city": {"type": "string"}}}}});
        let found = issues(schema, json!({"address": {"cty": "Paris"}}));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "/address");
        assert_eq!(found[0].suggestion.as_deref(), Some("city"));
    }

    #[test]
    fn recursive_schemas_validate_without_hanging() {
        let tree = json!({"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#"}}});
        let found = issues(tree, json!({"child": {"child": {"name": 5}}}));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "/child/child/name");
        // `{"$ref": "#"}` refers only to itself: it constrains nothing.
        assert_eq!(
            validate_args(&json!({"$ref": "#"}), &json!({"a": 1})).map(|v| v.len()),
            Ok(0)
        );
    }

    #[test]
    fn remote_refs_are_invalid_schemas_and_never_fetched() {
        for schema in [
            json!({"$ref": "http://example.com/x"}),
            json!({"properties": {"a": {"$ref": "https://127.0.0.1:9/s.json"}}}),
        ] {
            let err = validate_args(&schema, &json!({"a": 1})).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidSchema, "{err}");
            assert!(err.message.starts_with("Invalid input schema: "), "{err}");
        }
    }

    #[test]
    fn invalid_schemas_are_errors() {
        let oversized = wide_schema(10_000, true); // > MAX_SCHEMA_BYTES
        for schema in [
            json!({"type": 5}),
            json!({"pattern": "("}),
            json!("string"),
            json!(3),
            json!(null),
            json!([]),
            nested_schema(120),
            oversized,
        ] {
            let err = validate_args(&schema, &json!({})).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidSchema, "{schema:.60}");
            assert!(err.message.chars().count() <= 300);
        }
    }

    #[test]
    fn boolean_schemas() {
        assert!(issues(json!(true), json!({"anything": 1})).is_empty());
        assert_eq!(
            messages(json!(false), json!({})),
            vec!["This tool accepts no arguments."]
        );
        assert_eq!(
            messages(json!({"properties": {"x": false}}), json!({"x": 1})),
            vec![r#"Property "x" is not allowed."#]
        );
    }

    #[test]
    fn weird_keys_work() {
        let schema = json!({"type": "object", "required": ["__proto__"], "additionalProperties": false, "properties": {"__proto__": {"type": "string"}, "a/b~c": {"type": "number"}}});
        assert_eq!(
            messages(schema.clone(), json!({})),
            vec![r#"Missing required property "__proto__"."#]
        );
        assert_eq!(
            messages(schema.clone(), json!({"__proto__": 1})),
            vec![r#"Property "__proto__" must be a string, got number."#]
        );
        let found = issues(schema.clone(), json!({"__proto__": "x", "a/b~c": "no"}));
        assert_eq!(found[0].path, "/a~1b~0c");
        let found = issues(schema, json!({"__proto__": "x", "constructor": {}}));
        assert_eq!(
            found[0].message,
            r#"Unexpected property "constructor". Allowed: __proto__, a/b~c."#
        );
    }

    #[test]
    fn deep_args_are_one_issue() {
        let mut args = json!(1);
        for _ in 0..100 {
            args = json!([args]);
        }
        let found = issues(json!({}), args);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "");
    }

    #[test]
    fn compiled_schema_is_shared_across_threads() {
        let compiled = CompiledSchema::compile(&address_schema()).expect("compiles");
        let handles: Vec<_> = (0..2)
            .map(|i| {
                let compiled = compiled.clone();
                std::thread::spawn(move || {
                    compiled.validate(&json!({"marker": i, "address": {"city": "P"}}))
                })
            })
            .collect();
        for handle in handles {
            let found = handle.join().expect("thread");
            assert_eq!(
                found[0].message,
                r#"Property "marker" must be a string, got number."#
            );
        }
        assert_eq!(compiled.schema(), &address_schema());
    }

    #[test]
    fn declared_drafts_compile() {
        for draft in [
            "http://json-schema.org/draft-04/schema#",
            "http://json-schema.org/draft-07/schema#",
            "https://json-schema.org/draft/2019-09/schema",
            "https://json-schema.org/draft/2020-12/schema",
        ] {
            let schema = json!({"$schema": draft, "type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}});
            assert_eq!(
                messages(schema, json!({})),
                vec![r#"Missing required property "a"."#],
                "{draft}"
            );
        }
    }

    #[test]
    fn unknown_draft_uri() {
        let schema = json!({"$schema": "http://example.com/my-dialect", "type": "object", "required": ["a"]});
        // Compiled under the default draft instead of rejected.
        assert_eq!(
            messages(schema, json!({})),
            vec![r#"Missing required property "a"."#]
        );
        // Still invalid for another reason: that reason is reported.
        let err = validate_args(
            &json!({"$schema": "http://example.com/x", "type": 5}),
            &json!({}),
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidSchema);
        assert!(!err.message.contains("meta-schema"), "{err}");
    }

    #[test]
    fn deepest_accepted_schema_validates() {
        // 31 levels = 63 containers, just under MAX_JSON_DEPTH.
        let schema = nested_schema(31);
        let mut args = json!(5);
        for _ in 0..31 {
            args = json!({"child": args});
        }
        let found = issues(schema, args);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "/child".repeat(31));
    }

    #[test]
    fn union_mismatch_names_the_allowed_forms() {
        // mcp:biomcp:fetch `detail`, from the retrieval-dev catalog.
        let schema = json!({"properties": {"detail": {"anyOf": [{"enum": ["protocol", "locations", "outcomes", "references", "all", "full"], "type": "string"}, {"type": "null"}], "default": null, "title": "Detail"}}, "type": "object"});
        assert_eq!(
            messages(schema, json!({"detail": 3})),
            vec![
                r#"Property "detail" must be "protocol" | "locations" | "outcomes" | "references" | "all" | "full" | null; got 3."#
            ]
        );
        let schema = json!({"properties": {"id": {"oneOf": [{"type": "string"}, {"$ref": "#/$defs/N"}]}}, "$defs": {"N": {"type": "integer"}}});
        assert_eq!(
            messages(schema, json!({"id": true})),
            vec![r#"Property "id" must be string | number /* integer */; got true."#]
        );
    }

    #[test]
    fn draft4_idioms_without_schema_uri_compile() {
        // Shape of mcp:pdf-reader-mcp:read_pdf in the retrieval-dev catalog.
        let schema = json!({"type": "object", "properties": {"page": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}}});
        assert!(issues(schema.clone(), json!({"page": 3})).is_empty());
        assert_eq!(
            messages(schema, json!({"page": 0})),
            vec![r#"Property "page" must be > 0; got 0."#]
        );
    }
}
