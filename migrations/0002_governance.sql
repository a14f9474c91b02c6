-- Issue 15: caller-key policies and usage roll-ups.

-- The key's policy as the JSON of the validated `KeyPolicy` ('{}': unrestricted). Read with the
-- key by the cached caller lookup, so a warm request makes no query for it.
ALTER TABLE caller_keys ADD COLUMN policy TEXT NOT NULL DEFAULT '{}';

-- Per-minute usage, summed per (model, provider, key, end user). Written only by the tenant's
-- ledger Durable Object, in one batch per flush, never per request. An absent model, provider
-- or end user is ''. No foreign key: a flush racing a tenant's deletion must not fail the batch
-- (the deletion removes the rows and wipes the ledger).
CREATE TABLE usage_rollups (
  tenant_id TEXT NOT NULL,
  minute INTEGER NOT NULL,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  key_id TEXT NOT NULL,
  end_user TEXT NOT NULL,
  requests INTEGER NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  cached_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  PRIMARY KEY (tenant_id, minute, model, provider, key_id, end_user)
);
