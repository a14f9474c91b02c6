-- A routing rule's platform preference for its spread positions, as a JSON list of platforms
-- (["direct", "bedrock"]; NULL: not set). Kept beside the chain like prompt_cache, so `chain`
-- stays the array its depth checks measure. Aliases keep theirs in their spec JSON.
ALTER TABLE routing_rules ADD COLUMN prefer_platforms TEXT;
