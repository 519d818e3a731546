//! Layer check (issue #25): reads the Rust sources, resolves `use crate::…`,
//! `crate::…`, `super::…` and `self::…` paths to files, and asserts that
//! (a) the core's top-level modules only import modules of their rank or
//! below and (b) no files of the listed crates import each other in a circle.
//! A text scan, not a compiler pass: comments and literals are blanked first,
//! and a name re-exported with `pub use` is followed to the file defining it,
//! so `crate::catalog::ToolEntry` counts as an import of the entry file.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Core's top-level modules, lowest first. A module may import its own rank
/// or lower ones; the base modules share rank 0.
const CORE_RANKS: &[(&str, u32)] = &[
    ("error", 0),
    ("limits", 0),
    ("config", 0),
    ("telemetry", 0),
    ("schema", 1),
    ("entry", 2),
    ("search", 3),
    ("catalog", 4),
    ("surfaces", 5),
    ("session", 6),
];

/// Source folders (relative to the workspace root) whose files must not import
/// each other in a circle.
const CYCLE_FREE_CRATES: &[&str] = &[
    "crates/core/src",
    "crates/sandbox/src",
    "crates/embed/src",
    "crates/base/src",
    "crates/gateway/src",
    "src",
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Replaces comments, string and char literals with spaces (lengths kept).
fn blank(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank_range = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank_range(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank_range(&mut out, i, j);
            i = j;
        } else if b[i] == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            // Raw string r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                i += 1;
                continue;
            }
            j += 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            j = (j + close.len()).min(b.len());
            blank_range(&mut out, i, j);
            i = j;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            j = (j + 1).min(b.len());
            blank_range(&mut out, i, j);
            i = j;
        } else if b[i] == b'\'' {
            // A char literal ('a', '\n', '\u{..}'), not a lifetime ('a).
            let close = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                // Multi-byte UTF-8 char.
                let ch = src[i + 1..].chars().next();
                ch.and_then(|c| {
                    let end = i + 1 + c.len_utf8();
                    (b.get(end) == Some(&b'\'')).then_some(end)
                })
            };
            match close {
                Some(end) => {
                    blank_range(&mut out, i, end + 1);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// One source file of a crate.
struct SrcFile {
    /// Path relative to the workspace root.
    rel: String,
    /// Module path from the crate root (`[]` for the root).
    module: Vec<String>,
    /// Which crate root the file belongs to (lib vs each binary).
    root: String,
    text: String,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn load_crate(src: &str) -> Vec<SrcFile> {
    let root = workspace_root();
    let base = root.join(src);
    let mut paths = Vec::new();
    collect(&base, &mut paths);
    paths.sort();
    let mut files = Vec::new();
    for p in paths {
        let rel_in = p
            .strip_prefix(&base)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let parts: Vec<&str> = rel_in.trim_end_matches(".rs").split('/').collect();
        // Binaries under bin/ are their own crate roots.
        let (crate_root, parts) = if parts[0] == "bin" {
            (format!("bin/{}", parts[1]), parts[2..].to_vec())
        } else {
            ("lib".to_string(), parts)
        };
        let mut module: Vec<String> = parts.iter().map(|s| s.to_string()).collect();
        if matches!(
            module.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            module.pop();
        }
        let text = blank(&fs::read_to_string(&p).unwrap());
        files.push(SrcFile {
            rel: format!("{src}/{rel_in}"),
            module,
            root: crate_root,
            text,
        });
    }
    files
}

/// Expands a use tree (`a::{b, c::{d as e}, f::*}`) into full paths.
fn expand_tree(tree: &str) -> Vec<Vec<String>> {
    fn split_top(s: &str) -> Vec<&str> {
        let (mut depth, mut start, mut out) = (0, 0, Vec::new());
        for (i, c) in s.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(&s[start..]);
        out
    }
    let tree: String = tree
        .chars()
        .filter(|c| !c.is_whitespace() || *c == ' ')
        .collect();
    let tree = tree.trim();
    if tree.is_empty() {
        return Vec::new();
    }
    if let Some(brace) = tree.find('{') {
        let prefix = tree[..brace].trim().trim_end_matches("::");
        let inner = &tree[brace + 1..tree.rfind('}').unwrap_or(tree.len())];
        let head: Vec<String> = if prefix.is_empty() {
            Vec::new()
        } else {
            prefix.split("::").map(|s| s.trim().to_string()).collect()
        };
        let mut out = Vec::new();
        for part in split_top(inner) {
            for tail in expand_tree(part) {
                let mut p = head.clone();
                p.extend(tail);
                out.push(p);
            }
        }
        return out;
    }
    // Drop a rename: only the source path matters.
    let path = tree.split(" as ").next().unwrap().trim();
    vec![path.split("::").map(|s| s.trim().to_string()).collect()]
}

/// Finds `use …;` statements; returns (is `pub`, tree text, byte range).
fn use_statements(text: &str) -> Vec<(bool, String, std::ops::Range<usize>)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = text[i..].find("use ") {
        let at = i + p;
        i = at + 4;
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let Some(end) = text[at..].find(';').map(|e| at + e) else {
            break;
        };
        let before = text[..at].trim_end();
        let is_pub = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        out.push((is_pub, text[at + 4..end].to_string(), at..end + 1));
        i = end + 1;
    }
    out
}

/// Paths written inline in code: `crate::a::b`, `super::super::x`, `self::y`,
/// with their byte offsets.
fn inline_paths(text: &str) -> Vec<(usize, Vec<String>)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = ["crate::", "super::", "self::"].iter().find(|k| {
            text[i..].starts_with(**k) && (i == 0 || (!is_ident(b[i - 1]) && b[i - 1] != b':'))
        });
        let Some(_) = starts else {
            i += 1;
            continue;
        };
        let mut j = i;
        let mut segs = Vec::new();
        loop {
            let s = j;
            while j < b.len() && is_ident(b[j]) {
                j += 1;
            }
            if s == j {
                break;
            }
            segs.push(text[s..j].to_string());
            if text[j..].starts_with("::") && b.get(j + 2).is_some_and(|&c| is_ident(c)) {
                j += 2;
            } else {
                break;
            }
        }
        out.push((i, segs));
        i = j.max(i + 1);
    }
    out
}

/// Module path (from the file's crate root) an import path names, given the
/// module of the importing file; `None` for paths into other crates.
fn absolute(
    path: &[String],
    here: &[String],
    local_mods: &BTreeSet<String>,
) -> Option<Vec<String>> {
    let first = path.first()?;
    let mut out;
    let mut rest = path;
    match first.as_str() {
        "crate" => {
            out = Vec::new();
            rest = &rest[1..];
        }
        "self" => {
            out = here.to_vec();
            rest = &rest[1..];
        }
        "super" => {
            out = here.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                out.pop()?;
                rest = &rest[1..];
            }
        }
        name if local_mods.contains(name) => out = here.to_vec(),
        _ => return None,
    }
    out.extend(rest.iter().filter(|s| s.as_str() != "self").cloned());
    Some(out)
}

/// Inline `mod name { … }` blocks of a file: (name, byte range of the block).
fn inline_mods(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (at, _) in text.match_indices("mod ") {
        if at > 0 && is_ident(b[at - 1]) {
            continue;
        }
        let rest = &text[at + 4..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = rest[name.len()..].trim_start();
        if name.is_empty() || !after.starts_with('{') {
            continue;
        }
        let open = at + 4 + rest.len() - after.len();
        let mut depth = 0;
        let mut end = b.len();
        for (k, &c) in b.iter().enumerate().skip(open) {
            if c == b'{' {
                depth += 1;
            } else if c == b'}' {
                depth -= 1;
                if depth == 0 {
                    end = k;
                    break;
                }
            }
        }
        out.push((name, open..end));
    }
    out
}

/// The module an offset of a file is in: the file's module plus the inline
/// modules around the offset.
fn module_at(f: &SrcFile, mods: &[(String, std::ops::Range<usize>)], at: usize) -> Vec<String> {
    let mut m = f.module.clone();
    m.extend(
        mods.iter()
            .filter(|(_, r)| r.contains(&at))
            .map(|(n, _)| n.clone()),
    );
    m
}

struct Crate {
    files: Vec<SrcFile>,
    /// (root, module path) → file index.
    by_module: BTreeMap<(String, Vec<String>), usize>,
    /// Per file: name → absolute path of its `pub use` re-export.
    reexports: Vec<BTreeMap<String, Vec<String>>>,
    /// Per file: glob re-export sources.
    globs: Vec<Vec<Vec<String>>>,
}

fn child_mods(f: &SrcFile) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in f.text.lines() {
        let t = line.trim_start();
        let t = t
            .strip_prefix("pub(crate) ")
            .or_else(|| t.strip_prefix("pub "))
            .unwrap_or(t);
        if let Some(rest) = t.strip_prefix("mod ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

impl Crate {
    fn load(src: &str) -> Crate {
        let files = load_crate(src);
        let by_module = files
            .iter()
            .enumerate()
            .map(|(i, f)| ((f.root.clone(), f.module.clone()), i))
            .collect();
        let mut reexports = Vec::new();
        let mut globs = Vec::new();
        for f in &files {
            let locals = child_mods(f);
            let mods = inline_mods(&f.text);
            let mut map = BTreeMap::new();
            let mut glob = Vec::new();
            for (is_pub, tree, range) in use_statements(&f.text) {
                // Re-exports of inline modules (tests) are not the file's.
                if !is_pub || mods.iter().any(|(_, r)| r.contains(&range.start)) {
                    continue;
                }
                for raw in split_renames(&tree) {
                    let (path, alias) = raw;
                    let Some(abs) = absolute(&path, &f.module, &locals) else {
                        continue;
                    };
                    if path.last().map(String::as_str) == Some("*") {
                        glob.push(abs[..abs.len() - 1].to_vec());
                    } else {
                        let name = alias.unwrap_or_else(|| path.last().unwrap().clone());
                        map.insert(name, abs);
                    }
                }
            }
            reexports.push(map);
            globs.push(glob);
        }
        Crate {
            files,
            by_module,
            reexports,
            globs,
        }
    }

    /// The file an absolute module path lands in, following re-exports.
    fn target(&self, root: &str, abs: &[String], hops: u32) -> Option<usize> {
        let mut file = *self.by_module.get(&(root.to_string(), Vec::new()))?;
        let mut depth = 0;
        for (i, seg) in abs.iter().enumerate() {
            let mut m = abs[..i].to_vec();
            m.push(seg.clone());
            if let Some(&f) = self.by_module.get(&(root.to_string(), m)) {
                file = f;
                depth = i + 1;
            } else {
                break;
            }
        }
        let Some(name) = abs.get(depth) else {
            return Some(file);
        };
        if hops < 8 {
            if let Some(re) = self.reexports[file].get(name) {
                let mut next = re.clone();
                next.extend(abs[depth + 1..].iter().cloned());
                return self.target(root, &next, hops + 1).or(Some(file));
            }
            if !defines(&self.files[file].text, name) {
                for g in &self.globs[file] {
                    let mut next = g.clone();
                    next.extend(abs[depth..].iter().cloned());
                    if let Some(t) = self.target(root, &next, hops + 1) {
                        if t != file && defines(&self.files[t].text, name) {
                            return Some(t);
                        }
                    }
                }
            }
        }
        Some(file)
    }

    /// The files whose `pub use` re-exports a path passes through on its way to its origin.
    fn reexport_hubs(&self, root: &str, abs: &[String], hops: u32, hubs: &mut Vec<usize>) {
        let Some(mut file) = self.by_module.get(&(root.to_string(), Vec::new())).copied() else {
            return;
        };
        let mut depth = 0;
        for (i, seg) in abs.iter().enumerate() {
            let mut m = abs[..i].to_vec();
            m.push(seg.clone());
            match self.by_module.get(&(root.to_string(), m)) {
                Some(&f) => {
                    file = f;
                    depth = i + 1;
                }
                None => break,
            }
        }
        let Some(name) = abs.get(depth) else {
            return;
        };
        if hops < 8 {
            if let Some(re) = self.reexports[file].get(name) {
                hubs.push(file);
                let mut next = re.clone();
                next.extend(abs[depth + 1..].iter().cloned());
                self.reexport_hubs(root, &next, hops + 1, hubs);
            }
        }
    }

    /// Imports of a file's own item (its own or its children's) written through a re-export in
    /// another folder (not one of its ancestors): the file then names that folder for
    /// something it owns, a circle the file graph cannot see because it follows the
    /// re-export to the origin.
    fn imports_round_trip(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, abs) in self.imports() {
            let from = &self.files[i];
            let Some(t) = self.target(&from.root, &abs, 0) else {
                continue;
            };
            let to = &self.files[t];
            if to.root != from.root || !to.module.starts_with(&from.module) {
                continue;
            }
            let mut hubs = Vec::new();
            self.reexport_hubs(&from.root, &abs, 0, &mut hubs);
            for h in hubs {
                let hub = &self.files[h];
                // A parent re-exporting its child is the parent's to do; a child may use it.
                let own_or_ancestor =
                    hub.module.starts_with(&from.module) || from.module.starts_with(&hub.module);
                if !own_or_ancestor {
                    out.push(format!(
                        "{} imports its own `{}` (defined in {}) through the re-export in {}",
                        from.rel,
                        abs.join("::"),
                        to.rel,
                        hub.rel
                    ));
                }
            }
        }
        out
    }

    /// Every (file, absolute path written) import of the crate.
    fn imports(&self) -> Vec<(usize, Vec<String>)> {
        let mut out = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            let locals = child_mods(f);
            let mods = inline_mods(&f.text);
            let mut text = f.text.clone();
            for (_, tree, range) in use_statements(&f.text) {
                let here = module_at(f, &mods, range.start);
                for (path, _) in split_renames(&tree) {
                    let path: Vec<String> = path.into_iter().filter(|s| s != "*").collect();
                    if let Some(abs) = absolute(&path, &here, &locals) {
                        out.push((i, abs));
                    }
                }
                text.replace_range(range.clone(), &" ".repeat(range.len()));
            }
            for (at, path) in inline_paths(&text) {
                let here = module_at(f, &mods, at);
                if let Some(abs) = absolute(&path, &here, &locals) {
                    out.push((i, abs));
                }
            }
        }
        out
    }

    /// File → file imports. A module file's imports of the children it
    /// declares are left out: a parent owns its children (it declares them
    /// and re-exports or calls them) and a child may use its parent's items;
    /// circles among siblings, or across folders, are what the check finds.
    fn edges(&self) -> BTreeSet<(usize, usize)> {
        let mut edges = BTreeSet::new();
        for (i, abs) in self.imports() {
            if let Some(t) = self.target(&self.files[i].root, &abs, 0) {
                let (from, to) = (&self.files[i], &self.files[t]);
                let own_child = from.root == to.root
                    && to.module.len() == from.module.len() + 1
                    && to.module.starts_with(&from.module);
                if t != i && !own_child {
                    edges.insert((i, t));
                }
            }
        }
        edges
    }
}

fn split_renames(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    // Expand once without dropping renames, so the alias survives.
    let spaced = tree.replace(" as ", "\u{1}");
    expand_tree(&spaced)
        .into_iter()
        .map(|mut p| {
            let last = p.pop().unwrap_or_default();
            let (src, alias) = match last.split_once('\u{1}') {
                Some((s, a)) => (s.trim().to_string(), Some(a.trim().to_string())),
                None => (last, None),
            };
            p.push(src);
            (p, alias.filter(|a| a != "_"))
        })
        .collect()
}

fn defines(text: &str, name: &str) -> bool {
    [
        "fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union",
    ]
    .iter()
    .any(|kw| {
        let pat = format!("{kw} {name}");
        text.match_indices(&pat).any(|(at, _)| {
            let after = text.as_bytes().get(at + pat.len()).copied().unwrap_or(b' ');
            let before = if at == 0 {
                b' '
            } else {
                text.as_bytes()[at - 1]
            };
            !is_ident(after) && !is_ident(before)
        })
    }) || text.contains(&format!("macro_rules! {name}"))
}

/// Strongly connected components with more than one file (Tarjan).
fn cycles(n: usize, edges: &BTreeSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a].push(b);
    }
    struct St<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut St, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for k in 0..s.adj[v].len() {
            let w = s.adj[v][k];
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on[w] => s.low[v] = s.low[v].min(iw),
                _ => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = St {
        adj: &adj,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

fn rank_of(module: &str) -> Option<u32> {
    CORE_RANKS
        .iter()
        .find(|(m, _)| *m == module)
        .map(|&(_, r)| r)
}

/// Upward imports in crates/core: "importer file → module path" lines.
fn core_rank_violations(krate: &Crate) -> Vec<String> {
    let mut bad = BTreeSet::new();
    for (i, abs) in krate.imports() {
        let f = &krate.files[i];
        let (Some(from), Some(to)) = (f.module.first(), abs.first()) else {
            continue;
        };
        if from == to {
            continue;
        }
        match (rank_of(from), rank_of(to)) {
            (Some(a), Some(b)) if b > a => {
                bad.insert(format!(
                    "{} ({from}, rank {a}) imports crate::{} (rank {b})",
                    f.rel,
                    abs.join("::")
                ));
            }
            (None, _) => {
                bad.insert(format!(
                    "{}: module `{from}` has no rank in CORE_RANKS",
                    f.rel
                ));
            }
            _ => {}
        }
    }
    bad.into_iter().collect()
}

fn crate_cycles(src: &str) -> Vec<String> {
    let krate = Crate::load(src);
    let name = |i: usize| krate.files[i].rel.clone();
    let edges: BTreeSet<_> = krate.edges().into_iter().collect();
    cycles(krate.files.len(), &edges)
        .into_iter()
        .map(|comp| {
            let inner: Vec<String> = edges
                .iter()
                .filter(|(a, b)| comp.contains(a) && comp.contains(b))
                .map(|&(a, b)| format!("{} -> {}", name(a), name(b)))
                .collect();
            format!("circle of {} files: {}", comp.len(), inner.join("; "))
        })
        .collect()
}

#[test]
fn core_modules_import_only_their_rank_or_below() {
    let core = Crate::load("crates/core/src");
    // Every top-level module (declared in lib.rs) has a rank.
    let lib = core.files.iter().find(|f| f.module.is_empty()).unwrap();
    for m in child_mods(lib) {
        assert!(
            rank_of(&m).is_some(),
            "module `{m}` has no rank in CORE_RANKS"
        );
    }
    let bad = core_rank_violations(&core);
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

#[test]
fn no_file_import_cycles() {
    let mut all = Vec::new();
    for src in CYCLE_FREE_CRATES {
        all.extend(crate_cycles(src));
    }
    assert!(all.is_empty(), "import circles:\n{}", all.join("\n"));
}

#[test]
fn no_file_imports_its_own_items_through_another_folder() {
    let mut all = Vec::new();
    for src in CYCLE_FREE_CRATES {
        all.extend(Crate::load(src).imports_round_trip());
    }
    assert!(all.is_empty(), "round trips:\n{}", all.join("\n"));
}

/// What a binding file (`src/binding/`) may not hold: the binding converts arguments and hands off
/// (issue #37). Each pattern names the crate the decision belongs in.
const BINDING_MAY_NOT: &[(&str, &str)] = &[
    (
        "run_script(",
        "JS source: one adapter, js/channel.js, evaluated as ADAPTER_JS",
    ),
    ("Semaphore", "delivery gates: tool_search_gateway::channel"),
    (
        "AtomicU64",
        "request keys and counters: tool_search_gateway",
    ),
    (
        "Mode::",
        "mode decisions and fallbacks: core config or tool_search_gateway::code_mode",
    ),
    (
        "impl Executor for",
        "the executor: tool_search_gateway::executor",
    ),
    (
        "impl BridgeHost for",
        "bridges: tool_search_gateway::code_mode",
    ),
    (
        "impl CodeRunner for",
        "code runners: tool_search_gateway::code_mode",
    ),
];

#[test]
fn binding_files_convert_arguments_and_hand_off() {
    let mut files = Vec::new();
    collect(&workspace_root().join("src/binding"), &mut files);
    let mut found = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(workspace_root())
            .unwrap()
            .display()
            .to_string();
        let text = blank(&fs::read_to_string(&path).unwrap());
        // Tests may hold values and doubles.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (pattern, owner) in BINDING_MAY_NOT {
            // Whole words: `Mode::` is not `ThreadsafeFunctionCallMode::`.
            let uses = code.match_indices(pattern).filter(|(at, _)| {
                !code[..*at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            let allowed = |at: usize| {
                *pattern == "run_script(" && code[at..].starts_with("run_script(ADAPTER_JS)")
            };
            if uses.into_iter().any(|(at, _)| !allowed(at)) {
                found.push(format!("{rel}: `{pattern}` ({owner})"));
            }
        }
        // A number above 2 is a limit, a default or a clamp: core owns those.
        for (n, line) in code.lines().enumerate() {
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')) {
                let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic() || c == '_');
                let starts_with_digit = word.chars().next().is_some_and(|c| c.is_ascii_digit());
                if starts_with_digit {
                    if let Ok(value) = digits.replace('_', "").parse::<f64>() {
                        if value > 2.0 {
                            found.push(format!(
                                "{rel}:{}: the number {word} (limits and defaults live in core)",
                                n + 1
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "decisions in the binding:\n{}",
        found.join("\n")
    );
}

// The checker's own parts, on small inputs.

#[test]
fn use_trees_expand_with_renames() {
    let got = split_renames("crate::a::{b, c::{d as e, f}, g::*}");
    let want: Vec<(Vec<String>, Option<String>)> = vec![
        (vec!["crate".into(), "a".into(), "b".into()], None),
        (
            vec!["crate".into(), "a".into(), "c".into(), "d".into()],
            Some("e".into()),
        ),
        (
            vec!["crate".into(), "a".into(), "c".into(), "f".into()],
            None,
        ),
        (
            vec!["crate".into(), "a".into(), "g".into(), "*".into()],
            None,
        ),
    ];
    assert_eq!(got, want);
}

#[test]
fn blanking_hides_paths_in_comments_and_strings() {
    let src = "// crate::x\nlet s = \"crate::y\"; let c = '\"'; /* super::z */ crate::w::v";
    let paths: Vec<_> = inline_paths(&blank(src))
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    assert_eq!(
        paths,
        vec![vec!["crate".to_string(), "w".into(), "v".into()]]
    );
}

#[test]
fn cycle_finder_reports_only_circles() {
    let edges: BTreeSet<_> = [(0, 1), (1, 2), (2, 0), (3, 0)].into_iter().collect();
    assert_eq!(cycles(4, &edges), vec![vec![0, 1, 2]]);
    let line: BTreeSet<_> = [(0, 1), (1, 2)].into_iter().collect();
    assert!(cycles(3, &line).is_empty());
}

#[test]
fn super_and_local_paths_resolve_from_the_file_module() {
    let here = vec!["search".to_string(), "semantic".into()];
    let locals: BTreeSet<String> = ["fuse".to_string()].into_iter().collect();
    let p = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert_eq!(
        absolute(&p("super::index::X"), &here, &locals),
        Some(p("search::index::X"))
    );
    assert_eq!(
        absolute(&p("fuse::f"), &here, &locals),
        Some(p("search::semantic::fuse::f"))
    );
    assert_eq!(absolute(&p("std::sync::Arc"), &here, &locals), None);
}
