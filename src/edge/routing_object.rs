//! The Durable Object holding one tenant/provider's routing state (key parks, round-robin cursor,
//! per-model breakers). The client the cascade uses to reach it is `routing_client`.

use super::events::{fault, Fault};
use super::http::{json_body, now_ms};
use super::own_poll::own_poll;
use crate::config::ModelId;
use crate::health::committed::Committed;
use crate::health::provider_state::ModelTransition;
use crate::health::wire::read_report;
use crate::health::{Gate, Lease, ProviderState};
use crate::routing::stats::routing_snapshot::RoutingSnapshot;
use crate::routing::stats::stats_book::{
    AcquireAnswer, AcquireCall, Gauges, ReportStats, StatsBook, StatsPush, StatsSnapshot,
};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use worker::{durable_object, DurableObject, Env, Method, Request, Response, Result, State};

pub use super::routing_client::{call_object, record_transitions};

const STORAGE_KEY: &str = "state";
/// The live stats under their own key: only a call that brings outcomes writes them.
const STATS_KEY: &str = "stats";

#[durable_object]
pub struct RoutingObject {
    state: State,
    mem: RefCell<Committed<ProviderState>>,
    stats: RefCell<Committed<StatsBook>>,
}

#[derive(Serialize, Deserialize)]
pub struct ResetRequest {
    pub model: Option<ModelId>,
}

/// A streaming probe renewing its hold on the half-open breaker.
#[derive(Serialize, Deserialize)]
pub struct HoldRequest {
    pub model: ModelId,
    pub probe: u64,
    pub hold_ms: u64,
}

impl DurableObject for RoutingObject {
    fn new(state: State, _env: Env) -> Self {
        Self {
            state,
            mem: RefCell::new(Committed::default()),
            stats: RefCell::new(Committed::default()),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        self.ensure_loaded().await?;
        let now = now_ms();
        // Each route is a function of its own, and each one that awaits is polled through its own
        // (own_poll.rs): an object's first call compiles its own route's code only, where the
        // routes' bodies inlined here were one 35 KB function every first request compiled
        // (bench/cold_compile.py).
        match (req.method(), req.path().as_str()) {
            (Method::Post, "/acquire") => own_poll(self.acquire(req, now)).await,
            (Method::Post, "/stats") => own_poll(self.stats_route(req, now)).await,
            (Method::Post, "/report") => own_poll(self.report(req, now)).await,
            (Method::Post, "/hold") => own_poll(self.hold(req, now)).await,
            (Method::Post, "/reset") => own_poll(self.reset(req)).await,
            // `explain`: a read that changes nothing, not even the stats book.
            (Method::Get, "/snapshot") => self.snapshot(now),
            (Method::Get, "/gauges") => self.gauges(now),
            // The scheduled pass's probe and its view of the provider.
            (Method::Post, "/probe") => own_poll(self.probe(req, now)).await,
            (Method::Get, "/pass_view") => self.pass_view(now),
            (Method::Post, "/wipe") => own_poll(self.wipe()).await,
            _ => Response::error("no such routing-object route", 404),
        }
    }
}

/// The routes other than the request path's `/acquire` and `/report`, each not inlined into
/// `fetch` (see there).
impl RoutingObject {
    async fn stats_route(&self, mut req: Request, now: u64) -> Result<Response> {
        let push: StatsPush = json_body(&mut req).await?;
        match self.fold_stats(&push, now).await {
            Some(snapshot) => Response::from_json(&snapshot),
            None => Response::error("live stats not stored", 503),
        }
    }

    async fn hold(&self, mut req: Request, now: u64) -> Result<Response> {
        let body: HoldRequest = json_body(&mut req).await?;
        let held = self
            .commit(|st| {
                let held = st.hold(&body.model, body.probe, now, body.hold_ms);
                (held, held)
            })
            .await?;
        Response::from_json(&held)
    }

    async fn reset(&self, mut req: Request) -> Result<Response> {
        let body: ResetRequest = json_body(&mut req).await?;
        let transitions = self
            .commit(|st| (st.reset(body.model.as_ref().map(ModelId::as_str)), true))
            .await?;
        Response::from_json(&transitions)
    }

    async fn probe(&self, mut req: Request, now: u64) -> Result<Response> {
        let body: crate::health::AcquireRequest = json_body(&mut req).await?;
        let lease = self.commit_lease(|st| st.acquire_probe(&body, now)).await?;
        Response::from_json(&lease)
    }

    #[inline(never)]
    fn snapshot(&self, now: u64) -> Result<Response> {
        let mem = self.mem.borrow();
        let state = mem.get().cloned().unwrap_or_default();
        let stats = self.stats.borrow().get().map(|b| b.snapshot(&state, now));
        Response::from_json(&RoutingSnapshot::of(&state, stats))
    }

    #[inline(never)]
    fn gauges(&self, now: u64) -> Result<Response> {
        let (mem, stats) = (self.mem.borrow(), self.stats.borrow());
        Response::from_json(&Gauges::of(stats.get(), mem.get(), now))
    }

    #[inline(never)]
    fn pass_view(&self, now: u64) -> Result<Response> {
        let mem = self.mem.borrow();
        let view = mem.get().map(|st| st.pass_view(now));
        Response::from_json(&view.unwrap_or_default())
    }
}

impl RoutingObject {
    /// A grant for the request's candidate (and the live stats' snapshot, when it pushed some).
    async fn acquire(&self, mut req: Request, now: u64) -> Result<Response> {
        let AcquireCall {
            acquire: body,
            stats,
        } = json_body(&mut req).await?;
        let lease = self.commit_lease(|st| st.acquire(&body, now)).await?;
        // Memory only, and only when the pool changed (a decide copies the book).
        let noted = self
            .stats
            .borrow()
            .get()
            .is_some_and(|b| b.knows_pool(&body));
        if !noted {
            self.stats
                .borrow_mut()
                .decide(|book| (book.note_pool(&body), false));
        }
        let stats = match stats {
            Some(push) => self.fold_stats(&push, now).await,
            None => None,
        };
        Response::from_json(&AcquireAnswer { lease, stats })
    }

    /// An attempt's outcome: breaker transitions, parks, and the live stats it carries.
    async fn report(&self, mut req: Request, now: u64) -> Result<Response> {
        // Read as text and parsed here, not by `req.json()`: a park the JS number type
        // cannot hold exactly must not take the breaker news of the report down with it.
        let text = req.text().await?;
        let stats = serde_json::from_str::<ReportStats>(&text)
            .ok()
            .and_then(|r| r.stats);
        let read = match read_report(&text) {
            Ok(read) => read,
            Err(reason) => {
                fault(Fault::RoutingReportUnreadable { error: &reason });
                return Response::error(format!("unreadable report: {reason}"), 400);
            }
        };
        if !read.problems.is_empty() {
            fault(Fault::RoutingReportParksAdjusted {
                model: read.report.model.as_str(),
                problems: &read.problems,
            });
        }
        let body = read.report;
        let transitions = self.commit(|st| (st.report(&body, now), true)).await?;
        // An older isolate sent no `stats` and reads the plain list it always did.
        match stats {
            None => Response::from_json(&transitions),
            Some(push) => {
                let stats = self.fold_stats(&push, now).await;
                Response::from_json(
                    &serde_json::json!({"transitions": transitions, "stats": stats}),
                )
            }
        }
    }

    async fn wipe(&self) -> Result<Response> {
        self.state.storage().delete_all().await?;
        self.mem.borrow_mut().reset();
        self.stats.borrow_mut().reset();
        Response::from_json(&Vec::<ModelTransition>::new())
    }

    /// `storage.put(STATS_KEY, book, {allowUnconfirmed: true})`: the write is issued now, and no
    /// answer of this object waits for it (the output gate a confirmed write holds cost every
    /// grant renewal that carried outcomes a disk flush). A failure is logged under `waitUntil`;
    /// the runtime resets the object after a failed write. `Err`: the write could not be issued.
    fn store_unconfirmed(&self, book: &StatsBook) -> Result<()> {
        let value = serde_wasm_bindgen::to_value(book)
            .map_err(|e| worker::Error::RustError(e.to_string()))?;
        super::unconfirmed::put(&self.state, STATS_KEY, value, "live stats")
    }

    /// Loads the stored state once per object lifetime (and again after an inexact undo).
    async fn ensure_loaded(&self) -> Result<()> {
        if !self.mem.borrow().is_loaded() {
            let stored: Option<ProviderState> = self.state.storage().get(STORAGE_KEY).await?;
            self.mem.borrow_mut().load(stored);
        }
        if !self.stats.borrow().is_loaded() {
            let stored: Option<StatsBook> = self.state.storage().get(STATS_KEY).await?;
            self.stats.borrow_mut().load(stored);
        }
        Ok(())
    }

    /// Folds an isolate's batches and answers the snapshot at once. The stats book is advisory
    /// routing data, so no answer waits for its write: it goes out unconfirmed
    /// (`store_unconfirmed`). If that write fails, the runtime resets the object, which then
    /// starts again from the book it last stored: outcomes folded since are lost, never counted
    /// twice (the isolate that sent them was answered, and does not send them again).
    async fn fold_stats(&self, push: &StatsPush, now: u64) -> Option<StatsSnapshot> {
        let (_, pending) = self
            .stats
            .borrow_mut()
            .decide(|book| ((), book.fold(push, now)));
        let mut stored = None;
        if let Some(pending) = pending {
            if let Err(e) = self.store_unconfirmed(&pending.store) {
                let exact = self.stats.borrow_mut().undo(pending);
                fault(Fault::LiveStatsNotStored {
                    error: &e,
                    reload: !exact,
                });
                return None;
            }
            stored = Some(pending.store);
        }
        // The fold is stored, so it is answered even if a concurrent undo emptied memory.
        let stats = self.stats.borrow();
        let mem = self.mem.borrow();
        let book = stats.get().or(stored.as_ref())?;
        let empty = ProviderState::default();
        Some(book.snapshot(mem.get().unwrap_or(&empty), now))
    }

    /// A lease, stored only when it is a probe: only the move to half-open must survive
    /// eviction; the cursor may restart.
    async fn commit_lease(
        &self,
        decide: impl FnOnce(&mut ProviderState) -> Lease,
    ) -> Result<Lease> {
        self.commit(|st| {
            let lease = decide(st);
            let probe = matches!(lease.admission, Gate::Probe { .. });
            (lease, probe)
        })
        .await
    }

    /// Every decision is made on the in-memory state without an await in between, so concurrent
    /// requests see each other's effects at once (one probe, one cursor step each). `decide`
    /// also says whether its change must be stored; if it must and the write fails, the change
    /// is undone (`Committed::undo`, which also says how concurrency is handled) and the caller
    /// gets the error. So memory only holds what storage holds, and a transition is answered,
    /// and so gets its event, exactly when it was stored.
    async fn commit<R>(&self, decide: impl FnOnce(&mut ProviderState) -> (R, bool)) -> Result<R> {
        let (result, pending) = self.mem.borrow_mut().decide(decide);
        let Some(pending) = pending else {
            return Ok(result);
        };
        match self.state.storage().put(STORAGE_KEY, &pending.store).await {
            Ok(()) => Ok(result),
            Err(e) => {
                let exact = self.mem.borrow_mut().undo(pending);
                fault(Fault::RoutingStateNotStored {
                    error: &e,
                    reload: !exact,
                });
                Err(e)
            }
        }
    }
}
