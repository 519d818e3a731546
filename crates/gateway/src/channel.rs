//! The one channel from Rust to the gateway's JavaScript.
//!
//! Every call into a gateway function (the session's executor, `runCodeCell`'s bridge) is one
//! request: a JSON object text, given a key, handed to the JS adapter (`js/channel.js`) whose
//! `run` calls the function and always resolves with one answer text:
//! `{"ok":true,"value":…}`, `{"ok":false,"code":…,"message":…}` (it threw or rejected), or
//! `{"ok":false,"broken":…}` (the request could not be read). The adapter's `abort` aborts the
//! `AbortSignal` it passed to the function for that key.
//!
//! - **One delivery at a time, gateway-wide.** The next request is handed to the event loop only
//!   after the previous one's `JSON.parse` and synchronous function start have run. Node drains up
//!   to 1,000 queued threadsafe calls in one turn; with this gate a turn carries one delivery, so a
//!   flood of calls cannot freeze the event loop.
//! - **Keys in delivery order.** Keys are handed out under the gate, and `run` and `abort` travel
//!   on two queues: the adapter parks an abort whose run has not arrived yet (key above the last
//!   run seen), and that run then does not start the function.
//! - **An abort reaches JS exactly when there is something to abort**: a request aborted while it
//!   waits for the gate is never delivered; once delivered, the abort is sent once; a request
//!   whose future is dropped before it settles is aborted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use tool_search_core::session::BoxFuture;

/// The adapter's source: a function expression `(target, kind) => { run, abort }`, evaluated
/// once per wrapped function by the binding.
pub const ADAPTER_JS: &str = include_str!("../../../js/channel.js");

/// Which gateway function the adapter wraps: how it calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// `executor({ id, name, source, owner, args, toolCallId, parentToolCallId?, signal })`.
    Executor,
    /// `bridge(op, args, signal)`.
    Bridge,
}

impl Target {
    /// The adapter's `kind` argument.
    pub fn kind(self) -> &'static str {
        match self {
            Target::Executor => "executor",
            Target::Bridge => "bridge",
        }
    }

    /// How the channel's own failures name the function.
    fn named(self) -> &'static str {
        match self {
            Target::Executor => "the executor",
            Target::Bridge => "the bridge",
        }
    }
}

/// The answer's future once a request was handed over.
pub type Answering = BoxFuture<Result<String, String>>;

/// What the binding supplies: the adapter's `run` and `abort`, callable from any thread.
pub trait Port: Send + Sync {
    /// Hands `request` to the adapter's `run` on the JS thread. Resolves once `run` has returned
    /// (the request delivered, the function started), with the answer's future; or with why
    /// `run` could not be called.
    fn deliver(&self, request: String) -> BoxFuture<Result<Answering, String>>;
    /// Queues `request` (`{"key","reason"}`) for the adapter's `abort`; never waits.
    fn abort(&self, request: String);
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The function resolved with this value (`undefined` as null).
    Value(Value),
    /// The function threw or rejected: the error's `code` when it was a non-empty string, and
    /// its message.
    Thrown {
        code: Option<String>,
        message: String,
    },
    /// Aborted while it waited for delivery: the function never saw it.
    NotDelivered,
    /// The channel failed: `run` could not be called, or a text could not be decoded. A
    /// sentence naming the function as the channel was told to.
    Broken(String),
}

/// The gate every delivery passes, shared by every channel of the process.
fn delivery_gate() -> &'static tokio::sync::Semaphore {
    static GATE: OnceLock<tokio::sync::Semaphore> = OnceLock::new();
    GATE.get_or_init(|| tokio::sync::Semaphore::new(1))
}

/// One wrapped gateway function.
pub struct Channel {
    port: Arc<dyn Port>,
    /// Which function it wraps (names it in the channel's own failures).
    target: Target,
    /// Handed out under the delivery gate, so keys reach JS in increasing order.
    keys: Arc<AtomicU64>,
}

/// Where one request stands.
enum Delivery {
    Waiting,
    Cancelled,
    Delivered(u64),
    Done,
}

struct DeliveryState {
    state: Mutex<Delivery>,
    port: Arc<dyn Port>,
}

impl DeliveryState {
    fn abort(&self, reason: &str) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *state {
            Delivery::Waiting => *state = Delivery::Cancelled,
            Delivery::Delivered(key) => {
                *state = Delivery::Done;
                drop(state);
                let text = serde_json::json!({ "key": key, "reason": reason }).to_string();
                self.port.abort(text);
            }
            Delivery::Cancelled | Delivery::Done => {}
        }
    }

    /// Claims the next key, unless the request was aborted while it waited.
    fn deliver(&self, keys: &AtomicU64) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *state {
            Delivery::Waiting => {
                let key = keys.fetch_add(1, Ordering::Relaxed);
                *state = Delivery::Delivered(key);
                Some(key)
            }
            _ => None,
        }
    }

    fn settle(&self) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Delivery::Done;
    }
}

/// Aborts a request from any thread (a cancel callback, a watcher task).
#[derive(Clone)]
pub struct Abort(Arc<DeliveryState>);

impl Abort {
    /// Not delivered yet: it never will be. Delivered: the function's signal aborts with
    /// `reason`. Settled: nothing.
    pub fn abort(&self, reason: &str) {
        self.0.abort(reason);
    }
}

/// Aborts the request when its future is dropped before it settles (a cell's end drops its
/// bridge tasks at once, possibly before a cancel callback ran).
struct AbortOnDrop(Arc<DeliveryState>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort("the call was abandoned before it finished");
    }
}

impl Channel {
    pub fn new(port: Arc<dyn Port>, target: Target) -> Channel {
        Channel {
            port,
            target,
            keys: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Sends `body` (a JSON object) to the function. Returns the request's [`Abort`] and its
    /// answer. The body is held as text while it waits (a parsed value is many times its JSON).
    pub fn request(&self, body: &Value) -> (Abort, BoxFuture<Answer>) {
        let delivery = Arc::new(DeliveryState {
            state: Mutex::new(Delivery::Waiting),
            port: Arc::clone(&self.port),
        });
        let abort = Abort(Arc::clone(&delivery));
        let body = body.to_string();
        let port = Arc::clone(&self.port);
        let keys = Arc::clone(&self.keys);
        let what = self.target.named();
        let answer = Box::pin(async move {
            let guard = AbortOnDrop(delivery);
            let delivered = {
                let _permit = delivery_gate().acquire().await;
                let Some(key) = guard.0.deliver(&keys) else {
                    return Answer::NotDelivered;
                };
                let text = with_key(key, body);
                port.deliver(text).await
            };
            let answer = match delivered {
                Ok(answering) => match answering.await {
                    Ok(text) => decode(&text, what),
                    Err(reason) => Answer::Broken(format!("{what} failed to answer: {reason}")),
                },
                Err(reason) => Answer::Broken(format!("{what} could not be called: {reason}")),
            };
            guard.0.settle();
            answer
        });
        (abort, answer)
    }
}

/// `{"key":K,…body}`: the key, known only at delivery, put in front of the body's fields.
fn with_key(key: u64, body: String) -> String {
    match body.strip_prefix('{') {
        Some("}") | None => format!("{{\"key\":{key}}}"),
        Some(rest) => format!("{{\"key\":{key},{rest}"),
    }
}

/// The adapter's answer text, from the function named `what`.
pub fn decode(text: &str, what: &str) -> Answer {
    let Ok(mut answer) = serde_json::from_str::<Value>(text) else {
        return Answer::Broken(format!("{what}'s answer could not be decoded"));
    };
    if answer.get("ok").and_then(Value::as_bool) == Some(true) {
        return Answer::Value(
            answer
                .get_mut("value")
                .map(Value::take)
                .unwrap_or(Value::Null),
        );
    }
    if let Some(broken) = answer.get("broken").and_then(Value::as_str) {
        return Answer::Broken(format!("{what} was not called: {broken}"));
    }
    let code = answer
        .get("code")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    let message = answer
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Answer::Thrown { code, message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::AtomicUsize;

    /// A port that records what it was handed and answers from a function of the request.
    struct Recorder {
        delivered: Mutex<Vec<Value>>,
        aborted: Mutex<Vec<Value>>,
        answer: fn(&Value) -> Result<String, String>,
        refuse: bool,
    }

    impl Port for Recorder {
        fn deliver(&self, request: String) -> BoxFuture<Result<Answering, String>> {
            let value: Value = serde_json::from_str(&request).unwrap();
            self.delivered.lock().unwrap().push(value.clone());
            let answer = (self.answer)(&value);
            let refuse = self.refuse;
            Box::pin(async move {
                if refuse {
                    return Err("the environment is closing".to_string());
                }
                Ok(Box::pin(async move { answer }) as Answering)
            })
        }

        fn abort(&self, request: String) {
            self.aborted
                .lock()
                .unwrap()
                .push(serde_json::from_str(&request).unwrap());
        }
    }

    fn recorder(answer: fn(&Value) -> Result<String, String>) -> Arc<Recorder> {
        Arc::new(Recorder {
            delivered: Mutex::new(Vec::new()),
            aborted: Mutex::new(Vec::new()),
            answer,
            refuse: false,
        })
    }

    #[tokio::test]
    async fn a_request_crosses_with_its_key_first_and_its_answer_decoded() {
        let port =
            recorder(|r| Ok(json!({ "ok": true, "value": { "echo": r["op"] } }).to_string()));
        let channel = Channel::new(port.clone(), Target::Bridge);
        let (_, first) = channel.request(&json!({ "op": "search", "args": ["x"] }));
        let (_, second) = channel.request(&json!({}));
        assert_eq!(first.await, Answer::Value(json!({ "echo": "search" })));
        assert_eq!(second.await, Answer::Value(json!({ "echo": null })));
        let delivered = port.delivered.lock().unwrap();
        assert_eq!(
            delivered[0],
            json!({ "key": 1, "op": "search", "args": ["x"] })
        );
        assert_eq!(delivered[1], json!({ "key": 2 }));
    }

    #[tokio::test]
    async fn an_abort_before_delivery_keeps_the_request_from_the_function() {
        let port = recorder(|_| Ok(r#"{"ok":true,"value":1}"#.into()));
        let channel = Channel::new(port.clone(), Target::Bridge);
        let (abort, answer) = channel.request(&json!({ "op": "call" }));
        abort.abort("the cell ended");
        assert_eq!(answer.await, Answer::NotDelivered);
        assert!(port.delivered.lock().unwrap().is_empty());
        assert!(port.aborted.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn an_abort_after_delivery_is_sent_once_with_its_key() {
        let port = recorder(|_| Ok(r#"{"ok":true,"value":1}"#.into()));
        let channel = Channel::new(port.clone(), Target::Bridge);
        let (abort, answer) = channel.request(&json!({ "op": "call" }));
        // Delivered but not settled: poll the answer up to delivery by hand.
        let state = Arc::clone(&abort.0);
        assert!(state.deliver(&channel.keys).is_some());
        abort.abort("deadline");
        abort.abort("deadline again");
        assert_eq!(
            *port.aborted.lock().unwrap(),
            vec![json!({ "key": 1, "reason": "deadline" })]
        );
        // The claimed delivery moved the state on: the future no longer delivers.
        assert_eq!(answer.await, Answer::NotDelivered);
    }

    #[tokio::test]
    async fn a_dropped_request_is_aborted_once_delivered() {
        static ANSWERED: AtomicUsize = AtomicUsize::new(0);
        struct Pending(Arc<Recorder>);
        impl Port for Pending {
            fn deliver(&self, request: String) -> BoxFuture<Result<Answering, String>> {
                self.0
                    .delivered
                    .lock()
                    .unwrap()
                    .push(serde_json::from_str(&request).unwrap());
                Box::pin(async {
                    ANSWERED.fetch_add(1, Ordering::Relaxed);
                    Ok(Box::pin(std::future::pending()) as Answering)
                })
            }
            fn abort(&self, request: String) {
                self.0.abort(request)
            }
        }
        let inner = recorder(|_| unreachable!());
        let channel = Channel::new(Arc::new(Pending(inner.clone())), Target::Bridge);
        let (_abort, answer) = channel.request(&json!({ "op": "call" }));
        let task = tokio::spawn(answer);
        while ANSWERED.load(Ordering::Relaxed) == 0 {
            tokio::task::yield_now().await;
        }
        task.abort();
        let _ = task.await;
        assert_eq!(
            *inner.aborted.lock().unwrap(),
            vec![json!({ "key": 1, "reason": "the call was abandoned before it finished" })]
        );
    }

    #[tokio::test]
    async fn a_port_that_cannot_call_breaks_the_request_not_the_process() {
        let port = Arc::new(Recorder {
            delivered: Mutex::new(Vec::new()),
            aborted: Mutex::new(Vec::new()),
            answer: |_| Ok(String::new()),
            refuse: true,
        });
        let (_, answer) = Channel::new(port, Target::Executor).request(&json!({ "op": "call" }));
        assert_eq!(
            answer.await,
            Answer::Broken("the executor could not be called: the environment is closing".into())
        );
    }

    #[test]
    fn answers_decode_to_value_thrown_or_broken() {
        let decode = |text: &str| decode(text, "the bridge");
        assert_eq!(decode(r#"{"ok":true}"#), Answer::Value(Value::Null));
        assert_eq!(
            decode(r#"{"ok":false,"code":"TOOL_BLOCKED","message":"denied"}"#),
            Answer::Thrown {
                code: Some("TOOL_BLOCKED".into()),
                message: "denied".into()
            }
        );
        assert_eq!(
            decode(r#"{"ok":false,"code":"","message":"m"}"#),
            Answer::Thrown {
                code: None,
                message: "m".into()
            }
        );
        assert_eq!(
            decode(r#"{"ok":false,"broken":"the request could not be decoded"}"#),
            Answer::Broken("the bridge was not called: the request could not be decoded".into())
        );
        assert_eq!(
            decode("not json"),
            Answer::Broken("the bridge's answer could not be decoded".into())
        );
    }
}
