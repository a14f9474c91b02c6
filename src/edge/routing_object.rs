//! The Durable Object holding one tenant/provider's routing state (key parks, round-robin cursor,
//! per-model breakers). The client the cascade uses to reach it is `routing_client`.

use super::http::now_ms;
use crate::state::provider_state::ModelTransition;
use crate::state::wire::read_report;
use crate::state::{AcquireRequest, Admission, ProviderState};
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use worker::{
    console_error, durable_object, DurableObject, Env, Method, Request, Response, Result, State,
};

pub use super::routing_client::{breakers, call_object, record_transitions, RoutingClient};

const STORAGE_KEY: &str = "state";

#[durable_object]
pub struct RoutingObject {
    state: State,
    mem: RefCell<Option<ProviderState>>,
    /// Moves on with every decision that is persisted, so a rollback can tell whether another
    /// request decided on top of the change it is undoing.
    version: Cell<u64>,
}

#[derive(Serialize, Deserialize)]
pub struct ResetRequest {
    pub model: Option<String>,
}

/// A streaming probe renewing its hold on the half-open breaker.
#[derive(Serialize, Deserialize)]
pub struct HoldRequest {
    pub model: String,
    pub probe: u64,
    pub hold_ms: u64,
}

impl DurableObject for RoutingObject {
    fn new(state: State, _env: Env) -> Self {
        Self {
            state,
            mem: RefCell::new(None),
            version: Cell::new(0),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        self.ensure_loaded().await?;
        let now = now_ms();
        match (req.method(), req.path().as_str()) {
            (Method::Post, "/acquire") => {
                let body: AcquireRequest = req.json().await?;
                // Only the move to half-open must survive eviction; the cursor may restart.
                let lease = self
                    .commit(|st| {
                        let lease = st.acquire(&body, now);
                        let probe = matches!(lease.admission, Admission::Probe { .. });
                        (lease, probe)
                    })
                    .await?;
                Response::from_json(&lease)
            }
            (Method::Post, "/report") => {
                // Read as text and parsed here, not by `req.json()`: a park the JS number type
                // cannot hold exactly must not take the breaker news of the report down with it.
                let read = match read_report(&req.text().await?) {
                    Ok(read) => read,
                    Err(reason) => {
                        console_error!(
                            "{}",
                            serde_json::json!({"msg": "routing report unreadable", "error": reason})
                        );
                        return Response::error(format!("unreadable report: {reason}"), 400);
                    }
                };
                if !read.problems.is_empty() {
                    console_error!(
                        "{}",
                        serde_json::json!({"msg": "routing report parks adjusted", "model": read.report.model, "problems": read.problems})
                    );
                }
                let body = read.report;
                let transitions = self.commit(|st| (st.report(&body, now), true)).await?;
                Response::from_json(&transitions)
            }
            (Method::Post, "/hold") => {
                let body: HoldRequest = req.json().await?;
                let held = self
                    .commit(|st| {
                        let held = st.hold(&body.model, body.probe, now, body.hold_ms);
                        (held, held)
                    })
                    .await?;
                Response::from_json(&held)
            }
            (Method::Post, "/reset") => {
                let body: ResetRequest = req.json().await?;
                let transitions = self
                    .commit(|st| (st.reset(body.model.as_deref()), true))
                    .await?;
                Response::from_json(&transitions)
            }
            (Method::Get, "/breakers") => {
                let mem = self.mem.borrow();
                let views = mem
                    .as_ref()
                    .map(|st| st.not_closed(now))
                    .unwrap_or_default();
                Response::from_json(&views)
            }
            (Method::Post, "/wipe") => {
                self.state.storage().delete_all().await?;
                self.version.set(self.version.get().wrapping_add(1));
                *self.mem.borrow_mut() = Some(ProviderState::default());
                Response::from_json(&Vec::<ModelTransition>::new())
            }
            _ => Response::error("no such routing-object route", 404),
        }
    }
}

impl RoutingObject {
    /// Loads the stored state once per object lifetime.
    async fn ensure_loaded(&self) -> Result<()> {
        if self.mem.borrow().is_some() {
            return Ok(());
        }
        let stored: Option<ProviderState> = self.state.storage().get(STORAGE_KEY).await?;
        let mut mem = self.mem.borrow_mut();
        // Storage reads hold the input gate, but keep whatever a concurrent first request loaded.
        if mem.is_none() {
            *mem = Some(stored.unwrap_or_default());
        }
        Ok(())
    }

    /// Every decision is made on the in-memory state without an await in between, so concurrent
    /// requests see each other's effects at once (one probe, one cursor step each). `decide`
    /// also says whether its change must be stored; if it must and the write fails, the change
    /// is undone and the caller gets the error, so what memory holds is always what storage holds
    /// (a transition is answered, and so gets its event, only once it is stored).
    ///
    /// Rollback and concurrency: the runtime's input gate holds other requests while a storage
    /// write is in flight, so normally nothing decides on top of a change before it is stored,
    /// and the rollback restores the state from before it exactly. If something did (the gate is
    /// the platform's guarantee, not ours), restoring the old snapshot would drop that later
    /// decision, so memory is dropped instead and the next request reloads what storage holds.
    async fn commit<R>(&self, decide: impl FnOnce(&mut ProviderState) -> (R, bool)) -> Result<R> {
        let (before, result, after, version) = {
            let mut mem = self.mem.borrow_mut();
            let st = mem.get_or_insert_with(ProviderState::default);
            let before = st.clone();
            let (result, persist) = decide(st);
            if !persist {
                return Ok(result);
            }
            let version = self.version.get().wrapping_add(1);
            self.version.set(version);
            (before, result, st.clone(), version)
        };
        match self.state.storage().put(STORAGE_KEY, &after).await {
            Ok(()) => Ok(result),
            Err(e) => {
                let undone = self.version.get() == version;
                *self.mem.borrow_mut() = undone.then_some(before);
                self.version.set(self.version.get().wrapping_add(1));
                console_error!(
                    "{}",
                    serde_json::json!({"msg": "routing state not stored; decision undone", "error": e.to_string(), "reload": !undone})
                );
                Err(e)
            }
        }
    }
}
