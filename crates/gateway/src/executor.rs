//! The gateway's tool executor behind the session's [`Executor`], over the
//! [`channel`](crate::channel). The executor's own verdict travels as its error's `code`:
//! `TOOL_BLOCKED` (policy, approval, hook: a blocked result, never retried), `TOOL_UNAVAILABLE`
//! (the tool is gone: the call fails closed); any other throw is the tool's failure.

use serde_json::{json, Value};
use tool_search_core::session::{BoxFuture, Executor, ExecutorCall, ExecutorOutcome};

use crate::channel::{Answer, Channel};

pub struct GatewayExecutor(Channel);

impl GatewayExecutor {
    /// `channel` wraps the gateway's executor function (`Target::Executor`).
    pub fn new(channel: Channel) -> GatewayExecutor {
        GatewayExecutor(channel)
    }
}

impl Executor for GatewayExecutor {
    fn call(&self, call: ExecutorCall) -> BoxFuture<ExecutorOutcome> {
        let mut payload = json!({
            "id": call.id,
            "name": call.name,
            "source": call.source.as_str(),
            "owner": call.owner,
            "args": call.args,
            "toolCallId": call.tool_call_id,
        });
        if let Some(parent) = call.parent_tool_call_id {
            payload["parentToolCallId"] = Value::String(parent);
        }
        let (abort, answer) = self.0.request(&payload);
        drop(payload);
        let registration = call.cancel.on_cancel(move |reason| abort.abort(reason));
        Box::pin(async move {
            let _registration = registration;
            outcome_of(answer.await)
        })
    }
}

fn outcome_of(answer: Answer) -> ExecutorOutcome {
    match answer {
        Answer::Value(result) => ExecutorOutcome::Ok(result),
        Answer::Thrown { code, message } => match code.as_deref() {
            Some("TOOL_BLOCKED") => ExecutorOutcome::Blocked(message),
            Some("TOOL_UNAVAILABLE") => ExecutorOutcome::Missing(message),
            _ => ExecutorOutcome::Failed(message),
        },
        Answer::NotDelivered => ExecutorOutcome::Failed("cancelled before it was delivered".into()),
        Answer::Broken(reason) => ExecutorOutcome::Failed(reason),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executors_codes_decide_the_outcome() {
        let thrown = |code: Option<&str>| Answer::Thrown {
            code: code.map(str::to_string),
            message: "why".into(),
        };
        assert_eq!(
            outcome_of(Answer::Value(json!({ "content": [] }))),
            ExecutorOutcome::Ok(json!({ "content": [] }))
        );
        assert_eq!(
            outcome_of(thrown(Some("TOOL_BLOCKED"))),
            ExecutorOutcome::Blocked("why".into())
        );
        assert_eq!(
            outcome_of(thrown(Some("TOOL_UNAVAILABLE"))),
            ExecutorOutcome::Missing("why".into())
        );
        assert_eq!(
            outcome_of(thrown(Some("EACCES"))),
            ExecutorOutcome::Failed("why".into())
        );
        assert_eq!(
            outcome_of(thrown(None)),
            ExecutorOutcome::Failed("why".into())
        );
        assert_eq!(
            outcome_of(Answer::NotDelivered),
            ExecutorOutcome::Failed("cancelled before it was delivered".into())
        );
    }
}
