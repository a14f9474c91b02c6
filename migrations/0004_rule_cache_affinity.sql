-- Issue 22: a routing rule's prompt-cache affinity, in seconds (NULL: off). Kept beside the
-- chain rather than in its JSON, so `chain` stays the array its depth checks measure.
ALTER TABLE routing_rules ADD COLUMN cache_affinity_s INTEGER;
