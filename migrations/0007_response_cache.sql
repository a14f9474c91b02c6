-- Issue 27: a routing rule's response-cache TTL, in seconds (NULL: not set; 0: off). Kept beside
-- the chain like cache_affinity_s, so `chain` stays the array its depth checks measure. Aliases
-- keep theirs in their spec JSON; the tenant's `cache` setting lives in its settings JSON.
ALTER TABLE routing_rules ADD COLUMN cache_ttl_s INTEGER;
