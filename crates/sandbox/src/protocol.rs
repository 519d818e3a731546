//! The bridge protocol: newline-delimited JSON frames on two pipes.
//!
//! Child → parent (fd 3, untrusted; parsed strictly, exact key sets, size and depth caps,
//! `__proto__` keys rejected anywhere, `constructor`/`prototype` keys rejected when their value
//! is an object or array, the shape a naive deep merge turns into prototype pollution; a
//! tool parameter named `constructor` with a plain value passes):
//! - `{"t":"ready","node":"24.22.3","permission":true}` once, after the prelude locked down;
//! - `{"t":"call","id":N,"op":"search"|"describe"|"call","args":{…}}` with strictly increasing ids;
//! - `{"t":"log","level":"log"|"warn"|"error","text":"…"}`;
//! - `{"t":"result","ok":true,"value":…}` or `{"t":"result","ok":false,"error":{"name","message","stack"}}`;
//! - `{"t":"overflow","what":"result"|"logs","bytes":N}` (the prelude saw the value exceed its
//!   cap, or started dropping logs).
//!
//! The launcher's [`crate::launcher::LauncherReport`] precedes them (written before `execve`).
//!
//! Parent → child (fd 4): `{"t":"run","code":…,"caps":{…}}` and
//! `{"t":"reply","id":N,"ok":true,"value":…}` / `{"t":"reply","id":N,"ok":false,"error":{"code","message"}}`.

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt};
use tool_search_base::text::clip;

/// A key that can reach a prototype in a JS consumer of the frame: `__proto__`
/// always (its setter), `constructor`/`prototype` when they carry an object a
/// deep merge would walk into (`{"constructor":{"prototype":{…}}}`).
fn forbidden_key(key: &str, value: &Value) -> bool {
    match key {
        "__proto__" => true,
        "constructor" | "prototype" => matches!(value, Value::Object(_) | Value::Array(_)),
        _ => false,
    }
}

/// Reads `\n`-terminated frames with a size cap; cancel-safe (state lives in the struct).
pub struct FrameReader<R> {
    inner: R,
    buf: Vec<u8>,
    scanned: usize,
    max: usize,
    eof: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        FrameReader {
            inner,
            buf: Vec::new(),
            scanned: 0,
            max,
            eof: false,
        }
    }

    /// The next frame without its newline; `Ok(None)` at a clean end of stream.
    pub async fn next_frame(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            if let Some(pos) = self.buf[self.scanned..].iter().position(|b| *b == b'\n') {
                let end = self.scanned + pos;
                if end > self.max {
                    return Err(format!("frame over {} bytes", self.max));
                }
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                self.scanned = 0;
                return Ok(Some(line));
            }
            self.scanned = self.buf.len();
            if self.buf.len() > self.max {
                return Err(format!("frame over {} bytes", self.max));
            }
            if self.eof {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err("truncated frame at end of stream".into())
                };
            }
            self.buf.reserve(64 * 1024);
            match self.inner.read_buf(&mut self.buf).await {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) => return Err(format!("bridge read failed: {e}")),
            }
        }
    }

    /// Bytes received but not yet returned as frames.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

/// Which bridge operation a call frame asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Search,
    Describe,
    Call,
}

/// A validated call request.
#[derive(Clone, Debug, PartialEq)]
pub enum CallRequest {
    Search { query: String, options: Value },
    Describe { id: String },
    Call { id: String, args: Value },
}

impl CallRequest {
    pub fn op(&self) -> Op {
        match self {
            CallRequest::Search { .. } => Op::Search,
            CallRequest::Describe { .. } => Op::Describe,
            CallRequest::Call { .. } => Op::Call,
        }
    }
}

/// The error object of a thrown exception.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThrownError {
    pub name: String,
    pub message: String,
    pub stack: String,
}

/// A validated child → parent frame.
#[derive(Clone, Debug, PartialEq)]
pub enum ChildFrame {
    Ready { node: String, permission: bool },
    Call { id: u64, request: CallRequest },
    Log { level: LogLevel, text: String },
    Result(Result<Value, ThrownError>),
    Overflow { what: String, bytes: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
    Log,
    Warn,
    Error,
}

/// Parses and validates one frame from the child.
pub fn parse_child_frame(bytes: &[u8], max_depth: usize) -> Result<ChildFrame, String> {
    // serde_json stops at depth 128 with an error (no stack overflow) and rejects bad UTF-8.
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("malformed frame: {e}"))?;
    check_tree(&value, max_depth)?;
    let Value::Object(mut map) = value else {
        return Err("frame is not an object".into());
    };
    let kind = take_str(&mut map, "t")?;
    let frame = match kind.as_str() {
        "ready" => ChildFrame::Ready {
            node: take_str(&mut map, "node")?,
            permission: take_bool(&mut map, "permission")?,
        },
        "call" => {
            let id = take(&mut map, "id")?
                .as_u64()
                .ok_or("call id is not a non-negative integer")?;
            let op = take_str(&mut map, "op")?;
            let args = take(&mut map, "args")?;
            ChildFrame::Call {
                id,
                request: parse_call(&op, args)?,
            }
        }
        "log" => {
            let level = match take_str(&mut map, "level")?.as_str() {
                "log" => LogLevel::Log,
                "warn" => LogLevel::Warn,
                "error" => LogLevel::Error,
                other => return Err(format!("unknown log level {other:?}")),
            };
            ChildFrame::Log {
                level,
                text: take_str(&mut map, "text")?,
            }
        }
        "result" => {
            if take_bool(&mut map, "ok")? {
                ChildFrame::Result(Ok(take(&mut map, "value")?))
            } else {
                let Value::Object(mut err) = take(&mut map, "error")? else {
                    return Err("result error is not an object".into());
                };
                let thrown = ThrownError {
                    name: take_str(&mut err, "name")?,
                    message: take_str(&mut err, "message")?,
                    stack: take_str(&mut err, "stack")?,
                };
                no_extra(&err)?;
                ChildFrame::Result(Err(thrown))
            }
        }
        "overflow" => ChildFrame::Overflow {
            what: take_str(&mut map, "what")?,
            bytes: take(&mut map, "bytes")?
                .as_u64()
                .ok_or("overflow bytes is not an integer")?,
        },
        other => return Err(format!("unknown frame type {:?}", clip(other, 40))),
    };
    no_extra(&map)?;
    Ok(frame)
}

fn parse_call(op: &str, args: Value) -> Result<CallRequest, String> {
    let Value::Object(mut args) = args else {
        return Err("call args is not an object".into());
    };
    let request = match op {
        "search" => {
            // No length rule here: the frame cap bounds every string, and the host answers an
            // over-long query or id with an error the cell can catch (its catalog knows its bounds).
            let query = take_str(&mut args, "query")?;
            let options = match args.remove("options") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(Value::Object(o)) => Value::Object(o),
                Some(_) => return Err("search options is not an object".into()),
            };
            CallRequest::Search { query, options }
        }
        "describe" => CallRequest::Describe {
            id: take_str(&mut args, "id")?,
        },
        "call" => {
            let id = take_str(&mut args, "id")?;
            let call_args = match args.remove("args") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(v) => v,
            };
            CallRequest::Call {
                id,
                args: call_args,
            }
        }
        other => return Err(format!("unknown bridge op {:?}", clip(other, 40))),
    };
    no_extra(&args)?;
    Ok(request)
}

fn take(map: &mut Map<String, Value>, key: &str) -> Result<Value, String> {
    map.remove(key)
        .ok_or_else(|| format!("frame lacks {key:?}"))
}

fn take_str(map: &mut Map<String, Value>, key: &str) -> Result<String, String> {
    match take(map, key)? {
        Value::String(s) => Ok(s),
        _ => Err(format!("{key:?} is not a string")),
    }
}

fn take_bool(map: &mut Map<String, Value>, key: &str) -> Result<bool, String> {
    take(map, key)?
        .as_bool()
        .ok_or_else(|| format!("{key:?} is not a boolean"))
}

fn no_extra(map: &Map<String, Value>) -> Result<(), String> {
    match map.keys().next() {
        None => Ok(()),
        Some(k) => Err(format!("unexpected key {:?}", clip(k, 40))),
    }
}

/// Depth cap and forbidden keys (the shared iterative walk: no recursion on untrusted input).
pub fn check_tree(value: &Value, max_depth: usize) -> Result<(), String> {
    tool_search_base::value::walk(value, |node, depth| {
        if matches!(node, Value::Array(_) | Value::Object(_)) && depth > max_depth {
            return Err(format!("frame nested deeper than {max_depth}"));
        }
        if let Value::Object(map) = node {
            if let Some((k, _)) = map.iter().find(|(k, item)| forbidden_key(k, item)) {
                return Err(format!("forbidden key {k:?}"));
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<ChildFrame, String> {
        parse_child_frame(s.as_bytes(), 64)
    }

    #[test]
    fn accepts_well_formed_frames() {
        assert!(matches!(
            parse(r#"{"t":"ready","node":"24.1.0","permission":true}"#),
            Ok(ChildFrame::Ready { .. })
        ));
        assert_eq!(
            parse(r#"{"t":"call","id":3,"op":"call","args":{"id":"x","args":{"a":1}}}"#).unwrap(),
            ChildFrame::Call {
                id: 3,
                request: CallRequest::Call {
                    id: "x".into(),
                    args: serde_json::json!({"a":1})
                }
            }
        );
        assert!(matches!(
            parse(r#"{"t":"result","ok":true,"value":null}"#),
            Ok(ChildFrame::Result(Ok(Value::Null)))
        ));
    }

    #[test]
    fn plain_constructor_and_prototype_values_pass() {
        let args = serde_json::json!({"constructor": "Point", "prototype": false, "nested": {"constructor": 3}});
        let frame =
            format!(r#"{{"t":"call","id":1,"op":"call","args":{{"id":"x","args":{args}}}}}"#);
        assert_eq!(
            parse(&frame).unwrap(),
            ChildFrame::Call {
                id: 1,
                request: CallRequest::Call {
                    id: "x".into(),
                    args
                }
            }
        );
    }

    #[test]
    fn rejects_abuse() {
        for bad in [
            r#"{"t":"call","id":1,"op":"call","args":{"id":"x","args":{"__proto__":{"polluted":1}}}}"#,
            r#"{"t":"call","id":1,"op":"call","args":{"id":"x","args":{"constructor":{"prototype":1}}}}"#,
            r#"{"t":"call","id":1,"op":"call","args":{"id":"x","args":{"a":{"prototype":[1]}}}}"#,
            r#"{"t":"call","id":-1,"op":"search","args":{"query":"q"}}"#,
            r#"{"t":"call","id":1,"op":"exec","args":{}}"#,
            r#"{"t":"call","id":1,"op":"search","args":{"query":"q"},"extra":1}"#,
            r#"{"t":"log","level":"log"}"#,
            r#"{"t":"nope"}"#,
            r#"[1,2]"#,
            r#"{"t":"result","ok":true"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse(&deep).is_err());
        let deep65 = format!(
            r#"{{"t":"result","ok":true,"value":{}1{}}}"#,
            "[".repeat(64),
            "]".repeat(64)
        );
        assert!(parse(&deep65).is_err());
        assert!(
            parse_child_frame(b"{\"t\":\"log\",\"level\":\"log\",\"text\":\"\xff\"}", 64).is_err()
        );
    }

    #[tokio::test]
    async fn reader_caps_frames() {
        let data: &[u8] = b"{\"a\":1}\n0123456789abcdef\n";
        let mut r = FrameReader::new(data, 10);
        assert_eq!(r.next_frame().await.unwrap().unwrap(), b"{\"a\":1}");
        assert!(r.next_frame().await.is_err());
        let mut r = FrameReader::new(&b"ab\ncd"[..], 10);
        assert_eq!(r.next_frame().await.unwrap().unwrap(), b"ab");
        assert!(r.next_frame().await.is_err());
        let mut r = FrameReader::new(&b""[..], 10);
        assert_eq!(r.next_frame().await.unwrap(), None);
    }
}
