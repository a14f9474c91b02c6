-- CogniGate tenant configuration. Everything a tenant owns cascades from its row.
-- Specs are stored as the JSON of the validated config types; they were validated on write.

CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  -- Per-tenant overrides of routing defaults; absent fields fall back to [vars].
  settings TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL
);

-- Caller keys are shown once at creation and stored only as a SHA-256 hash.
CREATE TABLE caller_keys (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX caller_keys_by_tenant ON caller_keys(tenant_id);

CREATE TABLE providers (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, name)
);

CREATE TABLE models (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  provider TEXT NOT NULL,
  spec TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, provider) REFERENCES providers(tenant_id, name) ON DELETE CASCADE
);

CREATE TABLE aliases (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, name)
);

CREATE TABLE routing_rules (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  match_name TEXT NOT NULL,
  chain TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, match_name)
);

-- Breaker transitions and other operational events, listed by the admin API.
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  at INTEGER NOT NULL,
  body TEXT NOT NULL
);
CREATE INDEX events_by_tenant_time ON events(tenant_id, at);
