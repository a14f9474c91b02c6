//! Where the response cache keeps its entries, behind one port:
//!
//! - By default the Workers Cache API (`caches.default`): per location (each Cloudflare data
//!   centre has its own), free, and evicted under pressure; Miniflare provides it locally.
//!   Entries are keyed by a synthetic URL (`https://cognigate.cache/<key>`), stored with
//!   `Cache-Control: max-age=<ttl>` and their metadata in a header.
//! - A `CACHE_KV` KV binding, when configured, is used instead: global (a hit in every
//!   location), but KV writes and reads are billed, and KV is eventually consistent (a write can
//!   take up to about a minute to be seen elsewhere, so identical requests in different
//!   locations may both miss). Its shortest TTL is 60 s, so the entry's own expiry decides.
//!
//! A store that fails is a miss (or a write not made): the cache never fails a request.

use crate::response_cache::stored::StoredMeta;
use worker::{Cache, Env, Headers, Response};

const META_HEADER: &str = "x-cognigate-cache-meta";
const KV_BINDING: &str = "CACHE_KV";
/// KV refuses shorter TTLs.
const KV_MIN_TTL_S: u64 = 60;

pub(super) enum CacheApi {
    Edge(Cache),
    Kv(worker::kv::KvStore),
}

impl CacheApi {
    pub(super) fn of(env: &Env) -> Self {
        match env.kv(KV_BINDING) {
            Ok(kv) => Self::Kv(kv),
            Err(_) => Self::Edge(Cache::default()),
        }
    }

    fn url(key: &str) -> String {
        format!("https://cognigate.cache/{key}")
    }

    pub(super) async fn get(&self, key: &str) -> Option<(StoredMeta, Vec<u8>)> {
        match self {
            Self::Edge(cache) => {
                let mut resp = cache.get(Self::url(key), true).await.ok()??;
                let meta = resp.headers().get(META_HEADER).ok()??;
                let meta: StoredMeta = serde_json::from_str(&meta).ok()?;
                Some((meta, resp.bytes().await.ok()?))
            }
            Self::Kv(kv) => {
                let (body, meta) = kv.get(key).bytes_with_metadata::<StoredMeta>().await.ok()?;
                Some((meta?, body?))
            }
        }
    }

    pub(super) async fn put(&self, key: &str, meta: &StoredMeta, body: Vec<u8>, ttl_s: u32) {
        match self {
            Self::Edge(cache) => {
                let Ok(meta) = serde_json::to_string(meta) else {
                    return;
                };
                let headers = Headers::new();
                let set = [
                    headers.set("content-type", "application/octet-stream"),
                    headers.set("cache-control", &format!("max-age={ttl_s}")),
                    headers.set(META_HEADER, &meta),
                ];
                if set.iter().any(Result::is_err) {
                    return;
                }
                if let Ok(resp) = Response::from_bytes(body) {
                    let _ = cache.put(Self::url(key), resp.with_headers(headers)).await;
                }
            }
            Self::Kv(kv) => {
                let ttl = u64::from(ttl_s).max(KV_MIN_TTL_S);
                if let Ok(put) = kv.put_bytes(key, &body).and_then(|p| p.metadata(meta)) {
                    let _ = put.expiration_ttl(ttl).execute().await;
                }
            }
        }
    }
}
