//! Gateway CPU spent on hostile input: validating arguments against an
//! exponential `$ref` fan-out schema, and looking up unknown tool ids on a
//! large catalog (the "did you mean" scan). Figures for the README / issue.
//!
//! Usage: cargo run --release -p tool-search-core --example hostile_cost -- \
//!        <catalog.jsonl> [--fanout-depth N]...
//! Prints: the catalog build time, the fan-out schema's validate time (compile +
//! validate of `{x: 1}`) for each depth, and the unknown-id lookup cost
//! (p50 / max in µs) per shape of id.

use std::time::Instant;

use serde_json::{json, Value};
use tool_search_core::catalog::{Catalog, CatalogOptions, LookupStyle};
use tool_search_core::schema::validate_args;

/// The issue's schema: `$defs` where each level is `anyOf` of two refs to the next.
fn fanout_schema(depth: usize) -> Value {
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

/// Deterministic pseudo-random text (xorshift), so runs compare.
fn random_text(seed: &mut u64, len: usize, alphabet: &[u8]) -> String {
    (0..len)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            alphabet[(*seed % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: hostile_cost <catalog.jsonl> [--fanout-depth N]...");
    let mut depths = Vec::new();
    while let Some(flag) = args.next() {
        if flag == "--fanout-depth" {
            depths.push(
                args.next()
                    .and_then(|d| d.parse().ok())
                    .expect("--fanout-depth N"),
            );
        }
    }

    for depth in depths {
        let schema = fanout_schema(depth);
        let started = Instant::now();
        let outcome = validate_args(&schema, &json!({ "x": 1 }));
        let elapsed = started.elapsed();
        let summary = match outcome {
            Ok(issues) => format!("{} issue(s)", issues.len()),
            Err(err) => format!("{}: {}", err.code.as_str(), err.message),
        };
        println!(
            "fan-out depth {depth}: validate_args {:.3} ms ({summary})",
            elapsed.as_secs_f64() * 1e3
        );
    }

    // The worst schema the analysis accepts (7 levels, 510 checks per value)
    // with the largest arguments the budget lets through.
    let mut worst = fanout_schema(7);
    worst["properties"] =
        json!({ "items": { "type": "array", "items": { "$ref": "#/$defs/d0" } } });
    for count in [1usize, 1_958] {
        let args = json!({ "items": vec![1; count] });
        let started = Instant::now();
        let outcome = validate_args(&worst, &args);
        let summary = match outcome {
            Ok(issues) => format!("{} issue(s)", issues.len()),
            Err(err) => format!("{}: {}", err.code.as_str(), err.message),
        };
        println!(
            "worst accepted schema, {count} failing items: validate_args {:.3} ms ({summary:.120})",
            started.elapsed().as_secs_f64() * 1e3
        );
    }

    // The worst accepted yes / no pass: `allOf` fan-out (every branch runs on
    // valid values), 7 levels, as many values as the budget allows.
    let mut all_of = worst.clone();
    for level in 0..7 {
        let key = format!("d{level}");
        let next = format!("#/$defs/d{}", level + 1);
        all_of["$defs"][&key] = json!({ "allOf": [{ "$ref": next }, { "$ref": next }] });
    }
    {
        let count = 1_958usize;
        let args = json!({ "items": vec!["s"; count] });
        let started = Instant::now();
        let outcome = validate_args(&all_of, &args).map(|issues| issues.len());
        println!(
            "worst accepted allOf schema, {count} valid items: validate_args {:.3} ms ({outcome:?})",
            started.elapsed().as_secs_f64() * 1e3
        );
    }

    // Where the time goes, on the raw validator: yes/no, first error, all errors.
    let raw = jsonschema::options()
        .offline()
        .build(&worst)
        .expect("compiles");
    for count in [1usize, 1_958] {
        let args = json!({ "items": vec![1; count] });
        let started = Instant::now();
        let valid = raw.is_valid(&args);
        let is_valid = started.elapsed();
        let started = Instant::now();
        let first = raw.validate(&args).is_err();
        let first_error = started.elapsed();
        let started = Instant::now();
        let all = raw.iter_errors(&args).count();
        let every_error = started.elapsed();
        println!(
            "raw validator, {count} failing items: is_valid {:.3} ms ({valid}), validate {:.3} ms ({first}), iter_errors {:.3} ms ({all})",
            is_valid.as_secs_f64() * 1e3,
            first_error.as_secs_f64() * 1e3,
            every_error.as_secs_f64() * 1e3
        );
        let ok_args = json!({ "items": vec!["s"; count] });
        let started = Instant::now();
        let valid = raw.is_valid(&ok_args);
        println!(
            "raw validator, {count} valid items: is_valid {:.3} ms ({valid})",
            started.elapsed().as_secs_f64() * 1e3
        );
    }

    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    let options = CatalogOptions {
        cache: Some(false),
        ..CatalogOptions::default()
    };
    let mut builds = Vec::new();
    let mut catalog = None;
    for _ in 0..3 {
        let started = Instant::now();
        catalog = Some(Catalog::from_json_text(&text, &options).expect("catalog builds"));
        builds.push(started.elapsed().as_secs_f64() * 1e3);
    }
    builds.sort_by(f64::total_cmp);
    let catalog = catalog.unwrap();
    println!(
        "catalog: {} tools, {} excluded; build median {:.1} ms",
        catalog.size(),
        catalog.excluded().len(),
        builds[1]
    );

    let ids: Vec<String> = catalog.entries().map(|e| e.id.clone()).collect();
    let names: Vec<String> = catalog.entries().map(|e| e.name.clone()).collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let lower = b"abcdefghijklmnopqrstuvwxyz_:";
    let any = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:- ./";
    let mut shapes: Vec<(&str, Vec<String>)> = Vec::new();
    for len in [512, 300, 120, 40, 12] {
        let label: &'static str = Box::leak(format!("random {len} chars").into_boxed_str());
        shapes.push((
            label,
            (0..40).map(|_| random_text(&mut seed, len, any)).collect(),
        ));
    }
    shapes.push((
        "random words 250 chars",
        (0..40)
            .map(|_| {
                let mut words = String::new();
                while words.len() < 250 {
                    let n = 3 + (seed % 8) as usize;
                    words.push_str(&random_text(&mut seed, n, lower));
                    words.push(' ');
                }
                words
            })
            .collect(),
    ));
    shapes.push((
        "near-miss id (1-2 edits)",
        (0..200)
            .map(|i| {
                let mut id: Vec<char> = ids[(i * 61) % ids.len()].chars().collect();
                for _ in 0..1 + i % 2 {
                    let at = (random_text(&mut seed, 1, b"0123456789").as_bytes()[0] as usize * 7
                        + i)
                        % id.len();
                    id[at] = 'q';
                }
                id.into_iter().collect()
            })
            .collect(),
    ));
    shapes.push((
        "near-miss name (1 edit)",
        (0..200)
            .map(|i| {
                let name = &names[(i * 67) % names.len()];
                let mut chars: Vec<char> = name.chars().collect();
                let at = chars.len() / 2;
                chars.remove(at);
                chars.into_iter().collect()
            })
            .collect(),
    ));
    shapes.push((
        "empty-ish",
        vec![
            " ".into(),
            "x".into(),
            "a:b".into(),
            "::".into(),
            "_".into(),
            "mcp:".into(),
            "openclaw:core:".into(),
        ],
    ));

    for (label, selectors) in &shapes {
        // One untimed pass warms caches; then three timed rounds.
        for s in selectors {
            let _ = catalog.describe(s, LookupStyle::Code);
        }
        // Per selector, the fastest of three runs (the machine is shared: a
        // preempted run measures the scheduler, not the lookup).
        let mut micros = Vec::new();
        for s in selectors {
            let mut best = f64::MAX;
            for _ in 0..3 {
                let started = Instant::now();
                let outcome = catalog.describe(s, LookupStyle::Code);
                best = best.min(started.elapsed().as_secs_f64() * 1e6);
                assert!(outcome.is_err() || catalog.resolve(s, LookupStyle::Code).is_ok());
            }
            micros.push(best);
        }
        micros.sort_by(f64::total_cmp);
        println!(
            "unknown id, {label:<26} n={:<4} p50 {:>8.1} µs  max {:>8.1} µs",
            micros.len(),
            percentile(&micros, 0.5),
            micros[micros.len() - 1]
        );
    }
    for typo in [
        "github_create_isue",
        "create_isue",
        "mcp:github:create_isue",
        "gihub_create_issue",
    ] {
        let message = catalog
            .describe(typo, LookupStyle::Code)
            .err()
            .map(|e| e.message)
            .unwrap_or_else(|| "found".into());
        println!("{typo}: {message:.200}");
    }
}
