-- Per roll-up group, the prompt tokens written to the provider's prompt cache (5-minute and
-- 1-hour writes together) and what the prompt cache saved, net of the writes' premium over the
-- input price (negative when writes cost more than the reads saved). Reads are `cached_tokens`.
ALTER TABLE usage_rollups ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_rollups ADD COLUMN cache_savings_usd REAL NOT NULL DEFAULT 0;
