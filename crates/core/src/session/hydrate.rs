//! Directory mode's per-turn hydrated schemas: the tools a user prompt
//! likely needs, sent with their schema for this turn.
//!
//! The whole prompt is read in one linear pass (bounded by
//! [`MAX_PROMPT_BYTES`]). A request usually sits at one end of a long prompt
//! (pasted text, then the ask; or the ask, then the paste), so the search
//! query is the prompt's tail window followed by its head window; a short
//! prompt is searched whole. Capability families the request implies (web
//! research and news: a search tool and a page reader; a web address: the
//! reader; recall: the memory tools; posting to the conversation: one
//! messaging tool) are recognised from tool names and descriptions and
//! hydrated together.

use std::collections::BTreeSet;

use serde_json::Value;

use super::events::SessionEvent;
use super::Session;
use crate::catalog::{LookupStyle, SearchOptions, ToolEntry};
use crate::config::Mode;
use crate::error::{Error, ErrorCode, Result};
pub(super) use crate::limits::MAX_PROMPT_BYTES;
use crate::limits::{MAX_HYDRATED_TOOLS, MAX_NAME_CHARS, MAX_QUERY_CHARS};
use crate::surfaces::{entry_definition, serialized_len, ToolDefinition};

/// A prompt of at most this many words is searched whole.
const WHOLE_PROMPT_WORDS: usize = 48;
/// Words in the request window at each end of a longer prompt.
const WINDOW_WORDS: usize = 32;
/// A window keeps at least this many words when trimmed to whole sentences.
const MIN_WINDOW_WORDS: usize = 4;
/// Longer "words" (hashes, base64, minified code) say nothing about intent.
const MAX_WORD_CHARS: usize = 40;
/// Tools named in the prompt that are remembered (each found by one hash lookup).
const MAX_MENTIONS: usize = 16;
/// Longest token looked up as a tool id (`source:owner:name`).
const MAX_ID_BYTES: usize = 3 * MAX_NAME_CHARS + 2;
/// Candidates read per family query.
const FAMILY_CANDIDATES: usize = 16;
/// Description characters read to recognise a tool's family.
const FAMILY_DESCRIPTION_CHARS: usize = 300;

/// One word of the prompt: its text and whether a sentence ends after it.
#[derive(Debug, Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    ends_sentence: bool,
}

/// The parts of the prompt hydration reads: the request text (searched and
/// read for intent) and the tool names or ids mentioned anywhere.
#[derive(Debug, Default)]
pub(super) struct PromptReading {
    pub(super) request: String,
    /// Tools named by a distinctive identifier (with `_`, `-`, `.` or `:`)
    /// anywhere in the prompt, latest mention first.
    pub(super) mentioned: Vec<usize>,
}

/// The prompt within [`MAX_PROMPT_BYTES`]: head and tail slices (on char
/// boundaries), the tail empty when the prompt fits whole.
fn bounded(prompt: &str) -> (&str, &str) {
    if prompt.len() <= MAX_PROMPT_BYTES {
        return (prompt, "");
    }
    let floor = |mut i: usize| {
        while !prompt.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let head_end = floor(MAX_PROMPT_BYTES / 4);
    let tail_start = floor(prompt.len() - (MAX_PROMPT_BYTES - MAX_PROMPT_BYTES / 4));
    (&prompt[..head_end], &prompt[tail_start..])
}

fn words_of<'a>(text: &'a str, out: &mut Vec<Word<'a>>) {
    let mut start: Option<usize> = None;
    let push = |out: &mut Vec<Word<'a>>, s: usize, e: usize| {
        let word = text[s..e]
            .trim_matches(|c: char| c == '-' || c == '.' || c == '\'' || c == ':' || c == '/');
        if !word.is_empty() && word.chars().count() <= MAX_WORD_CHARS {
            out.push(Word {
                text: word,
                ends_sentence: false,
            });
        }
    };
    for (i, c) in text.char_indices() {
        let in_word = c.is_alphanumeric() || matches!(c, '_' | '-' | '\'' | '.' | ':' | '/');
        if in_word {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            push(out, s, i);
            // A word ending in `.` ("Paris.") ends a sentence too.
            if text[s..i].ends_with(['.', '?', '!']) {
                if let Some(last) = out.last_mut() {
                    last.ends_sentence = true;
                }
            }
        }
        if matches!(c, '.' | '?' | '!' | ';' | '\n') {
            if let Some(last) = out.last_mut() {
                last.ends_sentence = true;
            }
        }
    }
    if let Some(s) = start {
        push(out, s, text.len());
    }
}

/// Join words into query text, keeping sentence ends (the engine splits
/// multi-intent requests into clauses at them).
fn join(words: &[Word<'_>]) -> String {
    let mut out = String::new();
    for w in words {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w.text);
        if w.ends_sentence {
            out.push('.');
        }
    }
    out
}

/// The last [`WINDOW_WORDS`] words, without a leading partial sentence.
fn tail_window<'w, 'a>(words: &'w [Word<'a>]) -> &'w [Word<'a>] {
    let window = &words[words.len().saturating_sub(WINDOW_WORDS)..];
    if window.len() == words.len() {
        return window;
    }
    // Drop words up to the first sentence end inside the window (not the
    // last word: that one ends the request itself).
    let body = &window[..window.len().saturating_sub(1)];
    match body.iter().position(|w| w.ends_sentence) {
        Some(i) if window.len() - (i + 1) >= MIN_WINDOW_WORDS => &window[i + 1..],
        _ => window,
    }
}

/// The first [`WINDOW_WORDS`] words, without a trailing partial sentence.
fn head_window<'w, 'a>(words: &'w [Word<'a>]) -> &'w [Word<'a>] {
    let window = &words[..words.len().min(WINDOW_WORDS)];
    match window.iter().rposition(|w| w.ends_sentence) {
        Some(i) if i + 1 >= MIN_WINDOW_WORDS => &window[..=i],
        _ => window,
    }
}

/// Read the prompt; `lookup` finds the tool an exact name or id names.
pub(super) fn read_prompt(prompt: &str, lookup: impl Fn(&str) -> Option<usize>) -> PromptReading {
    let (head, tail) = bounded(prompt);
    let mut words = Vec::new();
    words_of(head, &mut words);
    if !tail.is_empty() {
        if let Some(last) = words.last_mut() {
            last.ends_sentence = true;
        }
        words_of(tail, &mut words);
    }
    let request = if words.len() <= WHOLE_PROMPT_WORDS {
        join(&words)
    } else {
        // Tail first: the engine keeps a bounded number of terms, in order.
        let tail = tail_window(&words);
        let head = head_window(&words[..words.len() - tail.len()]);
        let (tail, head) = (join(tail), join(head));
        let sep = if tail.ends_with('.') { " " } else { ". " };
        format!("{tail}{sep}{head}")
    };
    let request = tool_search_base::text::prefix(&request, MAX_QUERY_CHARS).to_string();

    let mut mentioned = Vec::new();
    // Latest first: the tail, then the head, each read backwards.
    for token in [tail, head].iter().flat_map(|t| {
        t.split(|c: char| c.is_whitespace() || "\"'`()[]{}<>,;!?".contains(c))
            .rev()
    }) {
        if mentioned.len() >= MAX_MENTIONS {
            break;
        }
        let token = token.trim_end_matches(['.', ':']);
        if token.contains(['_', '-', '.', ':']) && token.len() <= MAX_ID_BYTES {
            if let Some(o) = lookup(token) {
                if !mentioned.contains(&o) {
                    mentioned.push(o);
                }
            }
        }
    }
    PromptReading { request, mentioned }
}

// ---- capability families ----------------------------------------------

/// A group of tools that serve one capability together, recognised from tool
/// names and descriptions (no vendor names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Searching and reading the public web.
    Web,
    /// The agent's own long-term memory.
    Memory,
    /// Posting to the conversation's channel (`message`, `send_message`).
    Message,
}

/// A tool's role inside its family, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Finder,
    Reader,
    Other,
}

const MEMORY_QUERY: &str = "memory recall remember";
const MESSAGE_QUERY: &str = "send a message to the channel";
const WEB_FINDER_QUERY: &str = "search the web";
const WEB_READER_QUERY: &str = "fetch read web page url content";

const MEMORY_WORDS: &[&str] = &["memory", "memories", "remember", "recall"];
const WEB_WORDS: &[&str] = &[
    "web", "internet", "online", "url", "urls", "website", "websites", "webpage", "webpages",
    "http", "https",
];
const FINDER_WORDS: &[&str] = &["search", "find", "query", "lookup"];
const READER_WORDS: &[&str] = &[
    "fetch", "get", "read", "open", "scrape", "extract", "download", "crawl", "visit", "load",
];
const MESSAGE_WORDS: &[&str] = &[
    "message",
    "messages",
    "messaging",
    "chat",
    "channel",
    "channels",
    "post",
    "reply",
    "dm",
];

fn lower_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

fn family_of(e: &ToolEntry) -> Option<(Family, Role)> {
    let name: Vec<String> = lower_words(&e.name).collect();
    let description: Vec<String> = lower_words(
        e.description
            .get(..floor_boundary(&e.description, FAMILY_DESCRIPTION_CHARS))?,
    )
    .collect();
    let named = |set: &[&str]| name.iter().any(|w| set.contains(&w.as_str()));
    let described = |set: &[&str]| description.iter().any(|w| set.contains(&w.as_str()));
    let family = if named(MEMORY_WORDS) || (!named(WEB_WORDS) && described(MEMORY_WORDS)) {
        Family::Memory
    } else if named(WEB_WORDS) || described(WEB_WORDS) {
        Family::Web
    } else if named(MESSAGE_WORDS) {
        Family::Message
    } else {
        return None;
    };
    let role = if named(FINDER_WORDS) {
        Role::Finder
    } else if named(READER_WORDS) {
        Role::Reader
    } else {
        Role::Other
    };
    Some((family, role))
}

fn floor_boundary(text: &str, max: usize) -> usize {
    let mut i = max.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// What the request asks for, as far as families go.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Intents {
    /// Research on the web: search, then read pages.
    research: bool,
    /// Something the user told the agent before.
    recall: bool,
    /// A fact about the world as it is now ("who is the CEO of …").
    current_facts: bool,
    /// A page to read: the request holds a web address.
    read_url: bool,
    /// Something to post to the conversation ("post it here", "send a message to the team").
    deliver: bool,
}

const RESEARCH_WORDS: &[&str] = &[
    "research",
    "researching",
    "sources",
    "cite",
    "citation",
    "citations",
    "references",
    "investigate",
    "article",
    "articles",
    "online",
    "web",
    "internet",
    "website",
    "websites",
    "browse",
    "googling",
];
const RESEARCH_PHRASES: &[&str] = &["look up", "find out", "read up", "search for"];
/// News is found on the web and read there: both halves of the family.
const NEWS_WORDS: &[&str] = &["news", "headlines", "headline"];
const DELIVER_VERBS: &[&str] = &[
    "post", "send", "share", "reply", "forward", "announce", "notify", "tell",
];
/// Where a delivery goes, or what it is: with a delivery verb, the message family.
const DELIVER_PLACES: &[&str] = &[
    "here", "channel", "chat", "thread", "group", "team", "message", "dm", "them", "everyone",
];
const RECALL_WORDS: &[&str] = &[
    "remember",
    "remembered",
    "recall",
    "memory",
    "memories",
    "forgot",
    "forget",
    "forgotten",
];
const RECALL_PHRASES: &[&str] = &[
    "did i tell",
    "i told you",
    "i mentioned",
    "last time",
    "we discussed",
    "we talked",
    "my preference",
    "you know about me",
];
const NOW_WORDS: &[&str] = &[
    "current",
    "currently",
    "latest",
    "today",
    "now",
    "recent",
    "recently",
    "news",
    "tonight",
    "yesterday",
    "newest",
];
const QUESTION_WORDS: &[&str] = &[
    "who", "what", "whats", "when", "where", "which", "who's", "what's",
];
const PERSONAL_WORDS: &[&str] = &[
    "i", "me", "my", "mine", "we", "our", "us", "you", "your", "i'm", "i've",
];

fn intents(request: &str) -> Intents {
    let lower = request.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let any = |set: &[&str]| words.iter().any(|w| set.contains(w));
    let phrase = |set: &[&str]| {
        let spaced = format!(" {} ", words.join(" "));
        set.iter().any(|p| spaced.contains(&format!(" {p} ")))
    };
    let recall = any(RECALL_WORDS) || phrase(RECALL_PHRASES);
    let question_about_the_world = any(QUESTION_WORDS) && !any(PERSONAL_WORDS);
    let read_url = lower.contains("http://")
        || lower.contains("https://")
        || words.iter().any(|w| w.starts_with("www"));
    Intents {
        research: any(RESEARCH_WORDS) || phrase(RESEARCH_PHRASES) || (!recall && any(NEWS_WORDS)),
        recall,
        current_facts: !recall && (any(NOW_WORDS) || question_about_the_world),
        read_url,
        deliver: any(DELIVER_VERBS) && any(DELIVER_PLACES),
    }
}

/// `hydrate`'s options as a gateway passes them: `{ maxTools?, required? }`,
/// or nothing.
#[derive(Debug, Default, PartialEq)]
pub struct HydrateOptions {
    /// At most this many schemas (capped at [`MAX_HYDRATED_TOOLS`]).
    pub max_tools: Option<usize>,
    /// Tool names or ids wanted first.
    pub required: Vec<String>,
}

impl HydrateOptions {
    /// Read from JSON (`null` is the defaults); INVALID_REQUEST says which field is wrong.
    pub fn from_json(options: &Value) -> Result<HydrateOptions> {
        let invalid = |message: &str| Error::new(ErrorCode::InvalidRequest, message);
        let options = match options {
            Value::Null => return Ok(HydrateOptions::default()),
            Value::Object(map) => map,
            _ => return Err(invalid("options must be an object")),
        };
        let max_tools = match options.get("maxTools") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_f64() {
                Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => Some(n as usize),
                _ => return Err(invalid("maxTools must be a non-negative integer")),
            },
        };
        let names = "required must be an array of tool names or ids";
        let required = match options.get("required") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| invalid(names))?,
            Some(_) => return Err(invalid(names)),
        };
        Ok(HydrateOptions {
            max_tools,
            required,
        })
    }
}

impl Session {
    /// Directory mode: at most `max_tools` (default and cap 4) schemas likely
    /// needed this turn, `required` ones first, then the families the request
    /// implies, then the catalog's best matches for the request, then tools
    /// the prompt names elsewhere. Only trusted (OpenClaw) tools that are not
    /// already visible and whose name a direct call resolves to exactly one
    /// tool; unknown, untrusted or ambiguous required names are skipped.
    /// Other modes: none (tools mode searches, direct mode already shows
    /// every schema).
    pub fn hydrate(
        &self,
        user_prompt: &str,
        max_tools: Option<usize>,
        required: &[String],
    ) -> Vec<ToolDefinition> {
        if self.mode() != Mode::Directory {
            return Vec::new();
        }
        let max = max_tools
            .unwrap_or(MAX_HYDRATED_TOOLS)
            .min(MAX_HYDRATED_TOOLS);
        let catalog = &self.inner.catalog;
        let mut picker = Picker {
            session: self,
            max,
            chosen: Vec::new(),
            seen: BTreeSet::new(),
            excluded: None,
        };
        for wanted in required {
            match catalog.resolve_ordinal(wanted, LookupStyle::Structured) {
                Ok(o) if picker.add(o) => {}
                _ => {
                    tracing::debug!(target: "tool_search::session", required = wanted.as_str(), "required tool not hydrated (unknown, untrusted, visible or ambiguous)")
                }
            }
        }
        let lookup = |token: &str| catalog.exact_match(token, |_| true).one();
        let reading = if picker.full() {
            PromptReading::default()
        } else {
            read_prompt(user_prompt, lookup)
        };
        if !picker.full() && !reading.request.trim().is_empty() {
            let wants = intents(&reading.request);
            if wants.current_facts {
                // A question about the world now: the web, not what the user told us.
                picker.excluded = Some(Family::Memory);
            }
            // Families the request asks for in words come first.
            if wants.recall {
                picker.add_family(
                    Family::Memory,
                    &[Role::Finder, Role::Reader, Role::Other],
                    MEMORY_QUERY,
                );
            }
            if wants.research {
                picker.add_family(Family::Web, &[Role::Finder], WEB_FINDER_QUERY);
                picker.add_family(Family::Web, &[Role::Reader], WEB_READER_QUERY);
            }
            // A given address is read, not searched for.
            if wants.read_url {
                picker.add_family(Family::Web, &[Role::Reader], WEB_READER_QUERY);
            }
            if wants.deliver {
                picker.add_family(
                    Family::Message,
                    &[Role::Finder, Role::Reader, Role::Other],
                    MESSAGE_QUERY,
                );
            }
            // Ask for extra hits: untrusted, visible and ambiguous ones are skipped.
            let options = SearchOptions::ordinals((max * 4).max(8)).lexical_only();
            let hits = match catalog.search(&reading.request, &options) {
                Ok(ordinals) => ordinals,
                Err(e) => {
                    tracing::debug!(target: "tool_search::session", error = %e, "hydration search failed");
                    Vec::new()
                }
            };
            let mut hits = hits.into_iter();
            // A question's form only suggests the web: after the best match.
            if wants.current_facts {
                let _best = hits.by_ref().find(|&o| picker.add(o));
                picker.add_family(Family::Web, &[Role::Finder], WEB_FINDER_QUERY);
            }
            for o in hits {
                picker.add(o);
            }
        }
        for &o in &reading.mentioned {
            picker.add(o);
        }
        let chosen = picker.chosen;
        let defs: Vec<ToolDefinition> = chosen
            .iter()
            .filter_map(|&o| catalog.entry(o))
            .map(|e| entry_definition(e, e.name.clone()))
            .collect();
        let bytes = serialized_len(&defs);
        let ids: Vec<String> = chosen
            .iter()
            .filter_map(|&o| catalog.entry(o))
            .map(|e| e.id.clone())
            .collect();
        self.with_stats(|s| {
            s.last_hydrated = defs.len() as u64;
            s.hydrated_total += defs.len() as u64;
            s.bytes.hydrated += bytes as u64;
        });
        self.emit(SessionEvent::Hydrate { ids, bytes });
        defs
    }

    /// Whether `entry` may be hydrated: trusted, not already visible, and its
    /// name calls exactly this tool (a shared name would be refused as
    /// ambiguous when the model calls it).
    fn hydratable(&self, ordinal: usize, entry: &ToolEntry) -> bool {
        entry.is_trusted()
            && !self.inner.direct_names.contains(&entry.name)
            && self
                .exact_name_ordinals(&entry.name)
                .take(2)
                .eq(std::iter::once(ordinal))
    }
}

/// The hydration list being built: capped, without duplicates.
struct Picker<'s> {
    session: &'s Session,
    max: usize,
    chosen: Vec<usize>,
    seen: BTreeSet<usize>,
    /// A family this request must not hydrate from search hits.
    excluded: Option<Family>,
}

impl Picker<'_> {
    fn full(&self) -> bool {
        self.chosen.len() >= self.max
    }

    /// Add `ordinal` if there is room and it may be hydrated; true if it is in the list.
    fn add(&mut self, ordinal: usize) -> bool {
        if self.seen.contains(&ordinal) {
            return true;
        }
        let Some(entry) = self.session.catalog().entry(ordinal) else {
            return false;
        };
        if self.full() || !self.session.hydratable(ordinal, entry) {
            return false;
        }
        if self.excluded.is_some() && family_of(entry).map(|(f, _)| f) == self.excluded {
            return false;
        }
        self.seen.insert(ordinal);
        self.chosen.push(ordinal);
        true
    }

    /// Add the best member of `family` for each role in `roles` (every member
    /// for `Role::Other`, but one messaging tool: one channel is enough), found
    /// by searching the catalog with `query` and recognised by name and description.
    fn add_family(&mut self, family: Family, roles: &[Role], query: &str) {
        if self.excluded == Some(family) {
            return;
        }
        let Ok(candidates) = self.session.catalog().search(
            query,
            &SearchOptions::ordinals(FAMILY_CANDIDATES).lexical_only(),
        ) else {
            return;
        };
        let members: Vec<(usize, Role)> = candidates
            .into_iter()
            .filter_map(|o| {
                let entry = self.session.catalog().entry(o)?;
                match family_of(entry) {
                    Some((f, role)) if f == family && self.session.hydratable(o, entry) => {
                        Some((o, role))
                    }
                    _ => None,
                }
            })
            .collect();
        if family == Family::Message {
            if let Some(&(o, _)) = members.first() {
                self.add(o);
            }
            return;
        }
        for role in roles {
            let picks: Vec<usize> = members
                .iter()
                .filter(|(_, r)| r == role)
                .map(|(o, _)| *o)
                .collect();
            let picks = if *role == Role::Other {
                picks
            } else {
                picks.into_iter().take(1).collect()
            };
            for o in picks {
                self.add(o);
            }
        }
    }
}
