-- Issue 21: roll-ups written once per flush, and never into a re-created tenant.

-- Which creation of a tenant id a tenant row is. Usage records carry the generation of the config
-- that served them, and a roll-up is written only while a tenant row of that generation exists.
ALTER TABLE tenants ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;

-- The last generation each tenant id was given. Kept when the tenant is deleted, so a tenant
-- created again under the same id takes a generation no earlier record can carry.
CREATE TABLE tenant_generations (
  tenant_id TEXT PRIMARY KEY,
  generation INTEGER NOT NULL
);
INSERT INTO tenant_generations (tenant_id, generation) SELECT id, generation FROM tenants;

-- The last flush of roll-ups each ledger applied, per tenant generation. A ledger numbers its
-- flushes in increasing order and sends one at a time, so a flush numbered at most this one
-- already reached D1: sent again after a restart, it changes nothing.
CREATE TABLE usage_flushes (
  tenant_id TEXT NOT NULL,
  generation INTEGER NOT NULL,
  last_flush INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, generation)
);
