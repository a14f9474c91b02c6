-- Issue 27: a routing rule's response-cache TTL, in seconds (NULL: not set; 0: off). Kept beside
-- the chain like cache_affinity_s, so `chain` stays the array its depth checks measure. Aliases
-- keep theirs in their spec JSON; the tenant's `cache` setting lives in its settings JSON.
ALTER TABLE routing_rules ADD COLUMN cache_ttl_s INTEGER;

-- Issue 27: per roll-up group, the requests answered from the response cache and what they
-- saved (each stored answer's original cost). Hits are counted in `requests` too.
ALTER TABLE usage_rollups ADD COLUMN cache_hits INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_rollups ADD COLUMN saved_usd REAL NOT NULL DEFAULT 0;
