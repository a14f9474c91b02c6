-- A routing rule's prompt-cache breakpoint injection, as its JSON ({"inject": true, "ttl": "1h"};
-- NULL: not set). Kept beside the chain like on_refusal, so `chain` stays the array its depth
-- checks measure. Aliases keep theirs in their spec JSON.
ALTER TABLE routing_rules ADD COLUMN prompt_cache TEXT;
