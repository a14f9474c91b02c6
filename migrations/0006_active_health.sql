-- Issue 25: active health.

-- A tenant's webhook signing secret, sealed under CG_KEK like a provider key (never the secret
-- itself). Generated when `alerts.webhook_url` is set, rotated with the URL.
ALTER TABLE tenants ADD COLUMN alert_secret TEXT;

-- The tenant's degraded-mode state (the JSON of `state::degraded::DegradedMode`; NULL: healthy).
-- Written only by the scheduled pass, when it changes; read with the config, so the request path
-- knows it without a query or a round trip of its own.
ALTER TABLE tenants ADD COLUMN health_mode TEXT;

-- Tenants the scheduled pass visits: entered when a breaker opens, left once every breaker is
-- closed and the tenant is healthy. Visited oldest first, a page a run.
CREATE TABLE health_watch (
  tenant_id TEXT PRIMARY KEY,
  visited_at INTEGER NOT NULL
);
