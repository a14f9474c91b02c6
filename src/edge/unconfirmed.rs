//! `storage.put(key, value, {allowUnconfirmed: true})` for a Durable Object's advisory data (the
//! live stats, the metrics counters): the write is issued now and no answer of the object waits
//! for it (a confirmed write holds the object's output gate for its disk flush). A failure is
//! logged under `waitUntil`; the runtime then resets the object, which starts again from what it
//! last stored: what was added since is lost, never counted twice.

use super::events::{fault, Fault};
use worker::js_sys::{Function, Object, Promise, Reflect};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::{Result, State};

/// `Err`: the write could not be issued (nothing was written).
pub fn put(state: &State, key: &str, value: JsValue, what: &'static str) -> Result<()> {
    let storage: JsValue = state.as_raw().storage()?.into();
    let options = Object::new();
    Reflect::set(&options, &"allowUnconfirmed".into(), &JsValue::TRUE)?;
    let put: Function = Reflect::get(&storage, &"put".into())?.dyn_into()?;
    let written: Promise = put
        .call3(&storage, &key.into(), &value, &options)?
        .dyn_into()?;
    state.wait_until(async move {
        if let Err(e) = worker::wasm_bindgen_futures::JsFuture::from(written).await {
            fault(Fault::WriteFailed { what, error: &e });
        }
    });
    Ok(())
}
