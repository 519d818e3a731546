//! One run's end of the bridge to the child: sends the code, validates every frame from the
//! child, answers search/describe inline, runs calls on the host with a concurrency cap, enforces
//! the caps, the deadline and the abort signal. Any protocol violation ends the run.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use tool_search_base::limits::MAX_REASON_CHARS;
use tool_search_base::text::clip;
use tool_search_base::value::count_values;

use crate::budget::CallBytes;
use crate::config::{Caps, LogStyle, MAX_FAILURE_CHARS};
use crate::protocol::{parse_child_frame, CallRequest, ChildFrame, LogLevel};
use crate::result::{BridgeCallCounts, FailureKind, RunTelemetry};
use crate::spawn::ChildProc;
use crate::{BridgeError, BridgeHost, CancelToken, Lookup};

/// How a run ended. The bool on `Fail` says the child died without a result: the runner then
/// replaces the failure with what its exit status and stderr show (see `fault`); the stderr
/// itself goes to the operator's log, never into the message.
pub(crate) enum Outcome {
    Value(Value),
    Fail(FailureKind, String, bool),
}

fn fail(kind: FailureKind, message: impl Into<String>) -> Outcome {
    Outcome::Fail(kind, message.into(), false)
}

type CallOutput = (u64, Result<Value, BridgeError>);

struct QueuedCall {
    id: u64,
    tool: String,
    args_json: String,
}

pub(crate) struct Bridge {
    caps: Caps,
    log_style: LogStyle,
    host: Arc<dyn BridgeHost>,
    counts: BridgeCallCounts,
    total_calls: usize,
    last_id: Option<u64>,
    calls: JoinSet<CallOutput>,
    task_ids: HashMap<tokio::task::Id, u64>,
    tokens: HashMap<u64, CancelToken>,
    /// Calls waiting for a concurrency slot, with their arguments as JSON text.
    queue: VecDeque<QueuedCall>,
    /// Bytes charged per outstanding call (running or queued), released when it settles.
    charges: HashMap<u64, usize>,
    outstanding_bytes: usize,
    peak_call_bytes: usize,
    calls_refused: u64,
    gateway_bytes: Arc<CallBytes>,
    writer: Option<mpsc::Sender<Vec<u8>>>,
    writer_task: Option<tokio::task::JoinHandle<()>>,
    logs: Vec<String>,
    log_bytes: usize,
    logs_truncated: bool,
    dropped_log_bytes: usize,
    dropped_log_lines: usize,
    result_bytes: usize,
    diag_tail: Vec<u8>,
    diag_total: usize,
}

impl Bridge {
    pub(crate) fn new(
        caps: Caps,
        log_style: LogStyle,
        host: Arc<dyn BridgeHost>,
        gateway_bytes: Arc<CallBytes>,
    ) -> Self {
        Bridge {
            log_style,
            charges: HashMap::new(),
            outstanding_bytes: 0,
            peak_call_bytes: 0,
            calls_refused: 0,
            gateway_bytes,
            caps,
            host,
            counts: BridgeCallCounts::default(),
            total_calls: 0,
            last_id: None,
            calls: JoinSet::new(),
            task_ids: HashMap::new(),
            tokens: HashMap::new(),
            queue: VecDeque::new(),
            writer: None,
            writer_task: None,
            logs: Vec::new(),
            log_bytes: 0,
            logs_truncated: false,
            dropped_log_bytes: 0,
            dropped_log_lines: 0,
            result_bytes: 0,
            diag_tail: Vec::new(),
            diag_total: 0,
        }
    }

    /// Drives the child until a result, a failure, the deadline or an abort.
    pub(crate) async fn drive(
        &mut self,
        child: &mut ChildProc,
        code: String,
        deadline: tokio::time::Instant,
        timeout: Duration,
        cancel: &CancelToken,
    ) -> Outcome {
        let Some(mut to_child) = child.to_child.take() else {
            return fail(FailureKind::RuntimeError, "the child's bridge is gone");
        };
        // A separate writer: a child that stops reading must not stall the deadline or the reads.
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(self.caps.pending_replies);
        self.writer = Some(tx);
        self.writer_task = Some(tokio::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                if to_child.write_all(&bytes).await.is_err() {
                    break;
                }
            }
        }));
        let run = json!({
            "t": "run",
            "code": code,
            "caps": {
                "resultBytes": self.caps.result_bytes,
                "logBytes": self.caps.log_bytes,
                "logLines": self.caps.log_lines,
                "argBytes": self.caps.frame_bytes.saturating_sub(64),
                // The result frame wraps the value in one object.
                "jsonDepth": self.caps.json_depth.saturating_sub(1),
                "logStyle": self.log_style,
            },
        });
        if let Some(outcome) = self.send_value(&run) {
            return outcome;
        }

        let ChildProc {
            from_child, diag, ..
        } = child;
        let mut diag_buf: Vec<u8> = Vec::with_capacity(16 * 1024);
        let mut diag_open = true;
        loop {
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return fail(FailureKind::Aborted, "the run was aborted"),
                _ = tokio::time::sleep_until(deadline) => {
                    return fail(FailureKind::Timeout, format!("the code did not finish within {} ms", timeout.as_millis()));
                }
                frame = from_child.next_frame() => match frame {
                    Ok(Some(bytes)) => {
                        if let Some(outcome) = self.on_frame(&bytes, from_child.buffered()) {
                            return outcome;
                        }
                    }
                    Ok(None) => {
                        return Outcome::Fail(FailureKind::RuntimeError, "the cell's process ended before it returned a result".into(), true);
                    }
                    Err(e) => return fail(FailureKind::BridgeViolation, e),
                },
                joined = self.calls.join_next_with_id(), if !self.calls.is_empty() => {
                    if let Some(outcome) = self.on_call_done(joined) {
                        return outcome;
                    }
                }
                read = diag.read_buf(&mut diag_buf), if diag_open => {
                    match read {
                        Ok(0) | Err(_) => diag_open = false,
                        Ok(_) => {
                            self.on_diag(&diag_buf);
                            diag_buf.clear();
                            if self.diag_total > self.caps.stderr_max_bytes {
                                return fail(FailureKind::OutputLimit, format!(
                                    "the cell wrote more than {} bytes to its stdout and stderr", self.caps.stderr_max_bytes));
                            }
                        }
                    }
                }
            }
        }
    }

    fn on_frame(&mut self, bytes: &[u8], buffered_after: usize) -> Option<Outcome> {
        let frame = match parse_child_frame(bytes, self.caps.json_depth) {
            Ok(f) => f,
            Err(e) => return Some(fail(FailureKind::BridgeViolation, e)),
        };
        match frame {
            ChildFrame::Ready { .. } => {
                Some(fail(FailureKind::BridgeViolation, "unexpected ready frame"))
            }
            ChildFrame::Log { level, text } => self.on_log(level, text),
            ChildFrame::Call { id, request } => self.on_call(id, request, bytes.len()),
            ChildFrame::Result(result) => {
                if buffered_after > 0 {
                    return Some(fail(
                        FailureKind::BridgeViolation,
                        "frames after the result",
                    ));
                }
                Some(match result {
                    Ok(value) => {
                        let size = serde_json::to_vec(&value)
                            .map(|v| v.len())
                            .unwrap_or(usize::MAX);
                        self.result_bytes = size;
                        let values = count_values(&value, self.caps.result_values);
                        if size > self.caps.result_bytes {
                            fail(
                                FailureKind::OutputLimit,
                                result_too_large(size, self.caps.result_bytes),
                            )
                        } else if values > self.caps.result_values {
                            fail(FailureKind::OutputLimit, format!(
                                "the returned value holds more than {} JSON values; return a summary", self.caps.result_values))
                        } else {
                            Outcome::Value(value)
                        }
                    }
                    Err(thrown) => {
                        let text = if thrown.stack.is_empty() {
                            format!("{}: {}", thrown.name, thrown.message)
                        } else {
                            thrown.stack
                        };
                        fail(FailureKind::RuntimeError, clip(&text, MAX_FAILURE_CHARS))
                    }
                })
            }
            // `bytes` is where the child's bounded serialization stopped: at least that much.
            ChildFrame::Overflow { what, bytes } if what == "result" => Some(fail(
                FailureKind::OutputLimit,
                result_too_large(bytes, self.caps.result_bytes),
            )),
            ChildFrame::Overflow { what, .. } if what == "logs" => {
                self.logs_truncated = true;
                None
            }
            ChildFrame::Overflow { .. } => {
                Some(fail(FailureKind::BridgeViolation, "unknown overflow frame"))
            }
        }
    }

    fn on_log(&mut self, level: LogLevel, text: String) -> Option<Outcome> {
        let remaining = self.caps.log_bytes.saturating_sub(self.log_bytes);
        if self.logs.len() < self.caps.log_lines && remaining > 0 {
            let kept = if text.len() > remaining {
                self.logs_truncated = true;
                let mut end = remaining;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text[..end].to_string()
            } else {
                text
            };
            self.log_bytes += kept.len();
            self.logs.push(match (self.log_style, level) {
                (LogStyle::Json, _) | (_, LogLevel::Log) => kept,
                (LogStyle::Node, LogLevel::Warn) => format!("[warn] {kept}"),
                (LogStyle::Node, LogLevel::Error) => format!("[error] {kept}"),
            });
            return None;
        }
        // The prelude stops at the caps; anything more is a flood written around it.
        self.logs_truncated = true;
        self.dropped_log_bytes += text.len();
        self.dropped_log_lines += 1;
        if self.dropped_log_bytes > self.caps.log_flood_bytes
            || self.dropped_log_lines > self.caps.log_lines * 4
        {
            return Some(fail(
                FailureKind::OutputLimit,
                "log flood: the cell kept logging past the caps",
            ));
        }
        None
    }

    fn on_call(&mut self, id: u64, request: CallRequest, frame_bytes: usize) -> Option<Outcome> {
        if self.last_id.is_some_and(|last| id <= last) {
            return Some(fail(
                FailureKind::BridgeViolation,
                format!("duplicate or out-of-order call id {id}"),
            ));
        }
        self.last_id = Some(id);
        self.total_calls += 1;
        if self.total_calls > self.caps.calls_per_run {
            return Some(fail(
                FailureKind::BridgeViolation,
                format!(
                    "more than {} bridge calls in one run",
                    self.caps.calls_per_run
                ),
            ));
        }
        match request {
            CallRequest::Search { query, options } => {
                self.counts.search += 1;
                let token = CancelToken::new();
                match self.host.lookup_async(
                    Lookup::Search {
                        query: &query,
                        options: &options,
                    },
                    token.clone(),
                ) {
                    Some(future) => self.start_lookup(id, future, token),
                    None => {
                        let answer = self.host.search(&query, &options);
                        self.reply(id, answer)
                    }
                }
            }
            CallRequest::Describe { id: tool } => {
                self.counts.describe += 1;
                let token = CancelToken::new();
                match self
                    .host
                    .lookup_async(Lookup::Describe { id: &tool }, token.clone())
                {
                    Some(future) => self.start_lookup(id, future, token),
                    None => {
                        let answer = self.host.describe(&tool);
                        self.reply(id, answer)
                    }
                }
            }
            CallRequest::Call { id: tool, args } => {
                self.counts.call += 1;
                if let Err(refusal) = self.charge(id, frame_bytes) {
                    self.calls_refused += 1;
                    return self.reply(id, Err(refusal));
                }
                if self.calls.len() < self.caps.concurrent_calls {
                    self.start_call(id, tool, args);
                } else {
                    // Held as text until it starts: a parsed value is ~16x its JSON size.
                    let args_json = serde_json::to_string(&args).unwrap_or_else(|_| "null".into());
                    drop(args);
                    self.queue.push_back(QueuedCall {
                        id,
                        tool,
                        args_json,
                    });
                }
                None
            }
        }
    }

    /// Charges an accepted call to the cell's and the gateway's budgets, or says why not.
    fn charge(&mut self, id: u64, bytes: usize) -> Result<(), BridgeError> {
        let outstanding = self.charges.len();
        if outstanding >= self.caps.calls_outstanding
            || self.outstanding_bytes + bytes > self.caps.call_bytes_outstanding
        {
            return Err(BridgeError::new(
                "budget_exceeded",
                format!(
                    "this call was not started: the cell already has {outstanding} calls ({} bytes of arguments) \
                     outstanding, and a cell may have at most {} calls or {} bytes; await earlier calls first",
                    self.outstanding_bytes, self.caps.calls_outstanding, self.caps.call_bytes_outstanding
                ),
            ));
        }
        if !self.gateway_bytes.try_charge(bytes) {
            return Err(BridgeError::new(
                "gateway_busy",
                format!(
                    "this call was not started: the gateway already holds {} of {} bytes of bridged call arguments; try again later",
                    self.gateway_bytes.used(),
                    self.gateway_bytes.limit()
                ),
            ));
        }
        self.charges.insert(id, bytes);
        self.outstanding_bytes += bytes;
        self.peak_call_bytes = self.peak_call_bytes.max(self.outstanding_bytes);
        Ok(())
    }

    fn release(&mut self, id: u64) {
        if let Some(bytes) = self.charges.remove(&id) {
            self.outstanding_bytes -= bytes;
            self.gateway_bytes.release(bytes);
        }
    }

    /// A search or describe the host answers asynchronously: tracked like a call (its answer
    /// comes back through `on_call_done`, and it is cancelled when the run ends), but charged to
    /// no call budget (its request is a query or an id) and never queued.
    fn start_lookup(
        &mut self,
        id: u64,
        future: crate::CallFuture,
        token: CancelToken,
    ) -> Option<Outcome> {
        self.tokens.insert(id, token);
        let handle = self.calls.spawn(async move { (id, future.await) });
        self.task_ids.insert(handle.id(), id);
        None
    }

    fn start_call(&mut self, id: u64, tool: String, args: Value) {
        let token = CancelToken::new();
        self.tokens.insert(id, token.clone());
        let future = self.host.call(tool, args, token);
        let handle = self.calls.spawn(async move { (id, future.await) });
        self.task_ids.insert(handle.id(), id);
    }

    fn on_call_done(
        &mut self,
        joined: Option<Result<(tokio::task::Id, CallOutput), tokio::task::JoinError>>,
    ) -> Option<Outcome> {
        let (task, id, answer) = match joined? {
            Ok((task, (id, answer))) => (task, id, answer),
            Err(e) => {
                let id = self.task_ids.get(&e.id()).copied()?;
                (
                    e.id(),
                    id,
                    Err(BridgeError::new(
                        "internal",
                        "the tool call failed unexpectedly",
                    )),
                )
            }
        };
        self.task_ids.remove(&task);
        self.tokens.remove(&id);
        self.release(id);
        if let Some(next) = self.queue.pop_front() {
            let args = serde_json::from_str(&next.args_json).unwrap_or(Value::Null);
            self.start_call(next.id, next.tool, args);
        }
        self.reply(id, answer)
    }

    fn reply(&mut self, id: u64, answer: Result<Value, BridgeError>) -> Option<Outcome> {
        let error_frame = |e: &BridgeError| {
            json!({"t": "reply", "id": id, "ok": false,
                   "error": {"code": clip(&e.code, 100), "message": clip(&e.message, MAX_REASON_CHARS)}})
        };
        let frame = match &answer {
            Ok(value) => json!({"t": "reply", "id": id, "ok": true, "value": value}),
            Err(e) => error_frame(e),
        };
        let mut bytes = serde_json::to_vec(&frame).unwrap_or_default();
        if bytes.is_empty() || bytes.len() > self.caps.frame_bytes {
            let too_big = BridgeError::new(
                "result_too_large",
                format!(
                    "the answer is over the bridge frame cap of {} bytes",
                    self.caps.frame_bytes
                ),
            );
            bytes = serde_json::to_vec(&error_frame(&too_big)).unwrap_or_default();
        }
        bytes.push(b'\n');
        self.send_bytes(bytes)
    }

    fn send_value(&mut self, value: &Value) -> Option<Outcome> {
        let mut bytes = match serde_json::to_vec(value) {
            Ok(b) => b,
            Err(e) => {
                return Some(fail(
                    FailureKind::RuntimeError,
                    format!("cannot encode a frame: {e}"),
                ))
            }
        };
        bytes.push(b'\n');
        self.send_bytes(bytes)
    }

    fn send_bytes(&mut self, bytes: Vec<u8>) -> Option<Outcome> {
        let writer = self.writer.as_ref()?;
        match writer.try_send(bytes) {
            Ok(()) => None,
            Err(mpsc::error::TrySendError::Full(_)) => Some(fail(
                FailureKind::BridgeViolation,
                "the child is not reading its bridge",
            )),
            // The child is gone; the reader will see the end of the stream.
            Err(mpsc::error::TrySendError::Closed(_)) => None,
        }
    }

    fn on_diag(&mut self, chunk: &[u8]) {
        self.diag_total += chunk.len();
        self.diag_tail.extend_from_slice(chunk);
        let keep = self.caps.stderr_tail_bytes;
        if self.diag_tail.len() > keep {
            self.diag_tail.drain(..self.diag_tail.len() - keep);
        }
    }

    pub(crate) fn diag_tail(&self) -> Vec<u8> {
        self.diag_tail.clone()
    }

    /// Fires the tokens of calls still running, drops queued ones, aborts the tasks and the
    /// writer. Returns how many calls were cancelled.
    pub(crate) fn cancel_outstanding(&mut self) -> u64 {
        let cancelled = (self.tokens.len() + self.queue.len()) as u64;
        for token in self.tokens.values() {
            token.cancel();
        }
        self.tokens.clear();
        self.queue.clear();
        self.calls.abort_all();
        for (_, bytes) in self.charges.drain() {
            self.gateway_bytes.release(bytes);
        }
        self.outstanding_bytes = 0;
        self.writer = None;
        if let Some(task) = self.writer_task.take() {
            task.abort();
        }
        cancelled
    }

    pub(crate) fn fill_telemetry(&self, telemetry: &mut RunTelemetry) {
        telemetry.bridge_calls = self.counts.clone();
        telemetry.log_lines = self.logs.len() as u64;
        telemetry.log_bytes = self.log_bytes as u64;
        telemetry.logs_truncated = self.logs_truncated;
        telemetry.result_bytes = self.result_bytes as u64;
        telemetry.calls_refused = self.calls_refused;
        telemetry.peak_call_bytes = self.peak_call_bytes as u64;
    }

    pub(crate) fn take_logs(&mut self) -> Vec<String> {
        std::mem::take(&mut self.logs)
    }
}

/// The one sentence for a returned value over the byte cap. The run fails whole (no truncated
/// value): a cut JSON value would read as complete data.
fn result_too_large(bytes: impl std::fmt::Display, cap: usize) -> String {
    format!(
        "the returned value is at least {bytes} bytes of JSON, over the cap of {cap}; return a smaller value (a summary, a slice or a count)"
    )
}

impl Drop for Bridge {
    fn drop(&mut self) {
        self.cancel_outstanding();
    }
}
