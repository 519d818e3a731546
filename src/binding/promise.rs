//! Promises of JSON results, work on a libuv worker, and the caller's
//! `AbortSignal`: the one way an async result crosses (serialized off the
//! event loop, rebuilt there by one `JSON.parse`), and the listener a call
//! adds to its signal.

use napi::bindgen_prelude::*;
use serde::Serialize;
use tool_search_core::session::CancelSignal;
use tool_search_core::ErrorCode;

use super::convert::{json_text, parse_text};
use super::errors::{from_napi, guard, guard_future, invalid, JsCode, JsResult};

/// A rejection carrying the coded JS error (`error.code`), not a napi status.
pub(crate) fn coded_rejection(env: &Env, e: napi::Error<JsCode>) -> napi::Error {
    napi::Error::from(JsError::from(e).into_unknown(*env))
}

/// A failure of a promise's future: its code and message (`Send`, unlike a napi error).
pub(crate) type Failed = (JsCode, String);

/// A coded error as a [`Failed`].
fn failed(e: napi::Error<JsCode>) -> Failed {
    (e.status, e.reason.clone())
}

/// An INTERNAL failure of a promise's work.
pub(crate) fn internal_failure(message: impl ToString) -> Failed {
    (JsCode(ErrorCode::Internal.as_str()), message.to_string())
}

/// Work on a libuv worker (a catalog build, a search), run under `guard`:
/// `done` makes its JS value on the event loop; the argument error `work`
/// carries instead, or the work's failure, rejects with its coded error.
pub struct Worker<T, R> {
    work: Option<std::result::Result<Work<T>, Failed>>,
    done: fn(&Env, T) -> R,
}

type Work<T> = Box<dyn FnOnce() -> JsResult<T> + Send>;

pub(crate) fn on_worker<T, R, W>(
    work: JsResult<W>,
    done: fn(&Env, T) -> R,
) -> AsyncTask<Worker<T, R>>
where
    T: Send + 'static,
    R: ToNapiValue + TypeName,
    W: FnOnce() -> JsResult<T> + Send + 'static,
{
    let work = work.map(|w| Box::new(w) as Work<T>);
    AsyncTask::new(Worker {
        work: Some(work.map_err(failed)),
        done,
    })
}

impl<T: Send + 'static, R: ToNapiValue + TypeName> Task for Worker<T, R> {
    type Output = std::result::Result<T, Failed>;
    type JsValue = R;

    fn compute(&mut self) -> Result<Self::Output> {
        let work = self.work.take();
        let work = work.unwrap_or_else(|| Err(internal_failure("task ran twice")));
        Ok(work.and_then(|work| guard(work).map_err(failed)))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<R> {
        // Rejected with the same coded error the sync forms throw.
        output
            .map(|value| (self.done)(&env, value))
            .map_err(|(code, message)| coded_rejection(&env, napi::Error::new(code, message)))
    }
}

/// JSON text made on a worker, rebuilt on the event loop by one `JSON.parse`
/// (per-property conversion there costs ~7x more).
pub struct JsonText(pub String);

impl TypeName for JsonText {
    fn type_name() -> &'static str {
        "unknown"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

impl ToNapiValue for JsonText {
    // SAFETY: called by napi-rs on the JS thread with the env of the task's
    // completion callback; the value is made and returned in that env.
    unsafe fn to_napi_value(env: napi::sys::napi_env, text: Self) -> Result<napi::sys::napi_value> {
        let env = Env::from_raw(env);
        match parse_text(&env, text.0) {
            Ok(value) => Ok(value.raw()),
            Err(e) => Err(coded_rejection(&env, e)),
        }
    }
}

/// A promise of `future`'s value (or the argument error that `future` is, thrown),
/// serialized on the runtime and parsed on the JS thread; a failure, or a value that cannot
/// be serialized, rejects with its coded error (never `null`). `listener` is removed from its
/// signal when the promise settles (at once when no promise is made).
pub(crate) fn json_promise<'env, T: Serialize + Send + 'static>(
    env: &'env Env,
    future: JsResult<
        impl std::future::Future<Output = std::result::Result<T, Failed>> + Send + 'static,
    >,
    listener: Option<AbortListener>,
) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
    let spawned = future.and_then(|future| {
        let future = async move {
            Ok(match guard_future(future).await {
                Ok(outcome) => outcome.and_then(|value| json_text(&value).map_err(failed)),
                Err(panic) => Err((JsCode(panic.code.as_str()), panic.message)),
            })
        };
        let promise = env.spawn_future_with_callback(future, |env, text| {
            text.map_err(|(code, reason)| napi::Error::new(code, reason))
                .and_then(|text| parse_text(env, text))
                .map_err(|e| coded_rejection(env, e))
        });
        promise.map_err(from_napi)
    });
    let mut promise = match spawned {
        Ok(promise) => promise,
        Err(e) => {
            if let Some(listener) = listener {
                let _ = listener.remove(env);
            }
            return Err(e);
        }
    };
    if let Some(listener) = listener {
        // A signal reused across calls must not collect one listener per call.
        promise = promise
            .finally(move |env| listener.remove(&env))
            .map_err(from_napi)?;
    }
    Ok(promise)
}

/// A promise of `work`'s value, run on the runtime's blocking pool (long
/// work that must not hold a libuv worker: an audit, a flush to disk).
pub(crate) fn blocking_promise<'env, T: Serialize + Send + 'static>(
    env: &'env Env,
    work: impl FnOnce() -> tool_search_core::Result<T> + Send + 'static,
) -> Result<PromiseRaw<'env, Unknown<'env>>, JsCode> {
    let future = async move {
        let done = napi::bindgen_prelude::spawn_blocking(work).await;
        let done = done.map_err(internal_failure)?;
        done.map_err(|e| (JsCode(e.code.as_str()), e.message))
    };
    json_promise(env, Ok(future), None)
}

/// `EventTarget.removeEventListener(type, listener)`.
type RemoveListener<'a> = Function<'a, FnArgs<(&'a str, Function<'a, (), ()>)>, Unknown<'a>>;

/// The `abort` listener `handle` added to a caller's signal, removed when the call settles.
pub(crate) struct AbortListener {
    signal: ObjectRef,
    on_abort: FunctionRef<(), ()>,
}

impl AbortListener {
    pub(crate) fn remove(self, env: &Env) -> Result<()> {
        let AbortListener { signal, on_abort } = self;
        let removed = (|| {
            let target = signal.get_value(env)?;
            let remove: RemoveListener = target.get_named_property("removeEventListener")?;
            remove.apply(target, FnArgs::from(("abort", on_abort.borrow_back(env)?)))?;
            Ok::<(), Error>(())
        })();
        // The call itself is done: a failure here (a signal without a working
        // removeEventListener) must not turn its result into a rejection.
        let _ = signal.unref(env);
        drop(removed);
        Ok(())
    }
}

/// `options.signal` (read from the object: JSON cannot carry an `AbortSignal`) linked as a
/// core cancel signal that fires when it aborts; the listener it adds goes to `listener`, to
/// remove once the call settles (none if it was already aborted).
pub(crate) fn abort_signal(
    env: &Env,
    options: &Object,
    listener: &mut Option<AbortListener>,
) -> JsResult<Option<CancelSignal>> {
    let Some(signal) = super::convert::property(options, "signal")? else {
        return Ok(None);
    };
    let cancel = CancelSignal::new();
    if signal.get_type().map_err(from_napi)? != ValueType::Object {
        return Err(invalid("options.signal must be an AbortSignal"));
    }
    // SAFETY: checked to be an object just above.
    let signal: Object = unsafe { signal.cast() }.map_err(from_napi)?;
    let aborted: Option<bool> = signal.get_named_property("aborted").map_err(from_napi)?;
    if aborted == Some(true) {
        cancel.cancel("aborted by the caller's AbortSignal");
        return Ok(Some(cancel));
    }
    let on_abort = {
        let cancel = cancel.clone();
        env.create_function_from_closure::<(), (), _>("onAbort", move |_| {
            cancel.cancel("aborted by the caller's AbortSignal");
            Ok(())
        })
        .map_err(from_napi)?
    };
    // References first: once the listener is added, nothing may fail before
    // the caller holds what removes it.
    let added_listener = AbortListener {
        on_abort: on_abort.create_ref().map_err(from_napi)?,
        signal: signal.create_ref().map_err(from_napi)?,
    };
    let added = signal
        .get_named_property::<Function<FnArgs<(&str, Function<(), ()>)>, Unknown>>(
            "addEventListener",
        )
        .and_then(|add| add.apply(signal, FnArgs::from(("abort", on_abort))));
    if let Err(e) = added {
        let _ = added_listener.signal.unref(env);
        let reason = &e.reason;
        return Err(invalid(format!(
            "options.signal must be an AbortSignal: {reason}"
        )));
    }
    *listener = Some(added_listener);
    Ok(Some(cancel))
}
