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
        hint(json!({"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}})),
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
    let two =
        json!({"oneOf": [variant("ok"), {"$ref": "#/$defs/E"}], "$defs": {"E": variant("error")}});
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
