//! The bounded road from the agent to its front end, merging text deltas when the front end lags.
//!
//! The sink hands every event to a forwarder task over an internal channel the forwarder drains
//! at once; the forwarder passes them on through a channel of [`EVENT_CAPACITY`] events. While
//! that channel is full, events wait in the forwarder's outbox, where a text (or reasoning) delta
//! is appended to the delta just before it instead of queueing behind it (a specialist's to its
//! own last waiting delta, since specialists stream side by side): a stalled front end
//! costs the text it has not read, not one queue entry per chunk. Every other event is kept, in
//! order, and deltas merge only within one submission's events (`Event::id`). The thing a newcomer gets wrong: merging is only for events the front end has not
//! taken yet, so a front end that keeps up sees every delta exactly as streamed (the session
//! log, written before this, always does).

use std::collections::VecDeque;

use tokio::sync::mpsc;

use crate::protocol::{AgentEvent, Event};

/// Events the front end's channel holds before deltas start to merge.
pub const EVENT_CAPACITY: usize = 1024;

/// Starts the forwarder; returns the sink's end and the front end's bounded end.
pub fn channel() -> (mpsc::UnboundedSender<Event>, mpsc::Receiver<Event>) {
    let (input_tx, input_rx) = mpsc::unbounded_channel();
    let (output_tx, output_rx) = mpsc::channel(EVENT_CAPACITY);
    tokio::spawn(forward(input_rx, output_tx));
    (input_tx, output_rx)
}

/// Events not yet taken by the front end, consecutive deltas merged.
#[derive(Default)]
struct Outbox {
    queue: VecDeque<Event>,
}

impl Outbox {
    fn push(&mut self, stamped: Event) {
        let id = stamped.id;
        let event = stamped.msg;
        // A specialist's delta joins the last waiting event of the same specialist when that is
        // a delta of the same kind: specialists stream side by side, so their chunks interleave,
        // and each one's own order is what matters.
        if let AgentEvent::Scoped {
            agent,
            task,
            event: inner,
        } = &event
            && is_delta(inner)
        {
            let last_of_same =
                self.queue
                    .iter_mut()
                    .rev()
                    .find_map(|queued| match &mut queued.msg {
                        AgentEvent::Scoped {
                            agent: a,
                            task: t,
                            event: queued_inner,
                        } if a == agent && t == task && queued.id == id => Some(queued_inner),
                        _ => None,
                    });
            if let Some(queued_inner) = last_of_same
                && append(queued_inner, inner)
            {
                return;
            }
            self.queue.push_back(Event { id, msg: event });
            return;
        }
        let merged = self
            .queue
            .back_mut()
            .is_some_and(|last| last.id == id && append(&mut last.msg, &event));
        if !merged {
            self.queue.push_back(Event { id, msg: event });
        }
    }
}

fn is_delta(event: &AgentEvent) -> bool {
    matches!(
        event,
        AgentEvent::TextDelta { .. } | AgentEvent::ReasoningDelta { .. }
    )
}

/// Appends delta `more` to delta `to` when both are of one kind; whether it did.
fn append(to: &mut AgentEvent, more: &AgentEvent) -> bool {
    match (to, more) {
        (AgentEvent::TextDelta { text }, AgentEvent::TextDelta { text: more })
        | (AgentEvent::ReasoningDelta { text }, AgentEvent::ReasoningDelta { text: more }) => {
            text.push_str(more);
            true
        }
        _ => false,
    }
}

async fn forward(mut input: mpsc::UnboundedReceiver<Event>, output: mpsc::Sender<Event>) {
    let mut outbox = Outbox::default();
    loop {
        let next = if outbox.queue.is_empty() {
            input.recv().await
        } else {
            tokio::select! {
                permit = output.reserve() => {
                    match (permit, outbox.queue.pop_front()) {
                        (Ok(permit), Some(event)) => permit.send(event),
                        (Ok(_), None) => {}
                        // The front end is gone: nobody is left to tell.
                        (Err(_), _) => return,
                    }
                    continue;
                }
                next = input.recv() => next,
            }
        };
        let Some(event) = next else {
            // The agent has ended: hand over what is left, in order, as the front end takes it.
            for event in outbox.queue {
                if output.send(event).await.is_err() {
                    return;
                }
            }
            return;
        };
        if !outbox.queue.is_empty() {
            outbox.push(event);
            continue;
        }
        match output.try_send(event) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(event)) => outbox.push(event),
            Err(mpsc::error::TrySendError::Closed(_)) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(text: &str) -> AgentEvent {
        AgentEvent::TextDelta { text: text.into() }
    }

    /// `msg` as submission 1's.
    fn first(msg: AgentEvent) -> Event {
        Event { id: 1, msg }
    }

    fn messages(outbox: Outbox) -> Vec<AgentEvent> {
        outbox.queue.into_iter().map(|e| e.msg).collect()
    }

    #[test]
    fn deltas_of_different_submissions_stay_apart() {
        let mut outbox = Outbox::default();
        outbox.push(first(delta("a")));
        outbox.push(Event {
            id: 2,
            msg: delta("b"),
        });
        outbox.push(Event {
            id: 2,
            msg: delta("c"),
        });
        let ids: Vec<_> = outbox.queue.iter().map(|e| e.id).collect();
        assert_eq!(ids, vec![1, 2]);
        assert_eq!(messages(outbox), vec![delta("a"), delta("bc")]);
    }

    #[test]
    fn consecutive_deltas_merge_and_other_events_keep_their_place() {
        let mut outbox = Outbox::default();
        outbox.push(first(delta("a")));
        outbox.push(first(delta("b")));
        outbox.push(first(AgentEvent::TurnStarted { turn: 2 }));
        outbox.push(first(delta("c")));
        outbox.push(first(AgentEvent::ReasoningDelta { text: "x".into() }));
        outbox.push(first(AgentEvent::ReasoningDelta { text: "y".into() }));
        assert_eq!(
            messages(outbox),
            vec![
                delta("ab"),
                AgentEvent::TurnStarted { turn: 2 },
                delta("c"),
                AgentEvent::ReasoningDelta { text: "xy".into() },
            ]
        );
    }

    fn scoped(agent: &str, task: u32, event: AgentEvent) -> AgentEvent {
        AgentEvent::Scoped {
            agent: agent.into(),
            task,
            event: Box::new(event),
        }
    }

    #[test]
    fn interleaved_specialist_deltas_merge_per_specialist_and_keep_each_ones_order() {
        let mut outbox = Outbox::default();
        for i in 0..1_000 {
            outbox.push(first(scoped("file", 0, delta(&format!("f{i} ")))));
            outbox.push(first(scoped("search", 1, delta(&format!("s{i} ")))));
        }
        outbox.push(first(scoped(
            "file",
            0,
            AgentEvent::TurnStarted { turn: 2 },
        )));
        outbox.push(first(scoped("file", 0, delta("after"))));
        outbox.push(first(scoped("search", 1, delta("more"))));
        let file_text: String = (0..1_000).map(|i| format!("f{i} ")).collect();
        let search_text: String = (0..1_000).map(|i| format!("s{i} ")).collect::<String>() + "more";
        assert_eq!(
            messages(outbox),
            vec![
                scoped("file", 0, delta(&file_text)),
                scoped("search", 1, delta(&search_text)),
                scoped("file", 0, AgentEvent::TurnStarted { turn: 2 }),
                scoped("file", 0, delta("after")),
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_receiver_holds_at_most_its_capacity_plus_one_merged_delta_per_run() {
        let (input, input_rx) = mpsc::unbounded_channel();
        let (output, mut received) = mpsc::channel(8);
        tokio::spawn(forward(input_rx, output));
        let mut sent = Vec::new();
        for turn in 1..=2 {
            sent.push(AgentEvent::TurnStarted { turn });
            for i in 0..10_000 {
                sent.push(delta(&format!("{turn}.{i} ")));
            }
            sent.push(AgentEvent::Notice {
                message: format!("end of {turn}"),
            });
        }
        for event in sent.iter().cloned() {
            input.send(first(event)).expect("forwarder alive");
        }
        drop(input);
        // Paused time moves only when every task is idle: the forwarder has taken everything
        // and waits on the full channel.
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        assert_eq!(received.len(), 8);
        let mut got = Vec::new();
        while let Some(event) = received.recv().await {
            got.push(event.msg);
        }
        let is_delta = |e: &AgentEvent| matches!(e, AgentEvent::TextDelta { .. });
        let deltas = got.iter().filter(|e| is_delta(e)).count();
        assert!(deltas <= 8 + 2, "{deltas} deltas queued");
        let text = |events: &[AgentEvent]| -> String {
            events
                .iter()
                .filter_map(|e| match e {
                    AgentEvent::TextDelta { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(text(&got), text(&sent), "the whole text, once, in order");
        let others = |events: &[AgentEvent]| -> Vec<AgentEvent> {
            events.iter().filter(|e| !is_delta(e)).cloned().collect()
        };
        assert_eq!(others(&got), others(&sent));
    }
}
