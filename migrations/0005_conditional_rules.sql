-- Issue 23: routing rules keyed by their name, several per requested name (match), tried by
-- priority then name, each with an optional condition (`when`) and its `on_refusal`.
-- SQLite cannot change a primary key in place: the table is rebuilt and every rule copied with
-- its match as its name (what a rule written without a name is called), priority 0, no
-- condition and `on_refusal` 'answer' (the default it had).

CREATE TABLE routing_rules_v5 (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  match_name TEXT NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  when_json TEXT,
  on_refusal TEXT NOT NULL DEFAULT 'answer',
  cache_affinity_s INTEGER,
  chain TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, name)
);

INSERT INTO routing_rules_v5 (tenant_id, name, match_name, priority, when_json, on_refusal, cache_affinity_s, chain, updated_at)
  SELECT tenant_id, match_name, match_name, 0, NULL, 'answer', cache_affinity_s, chain, updated_at FROM routing_rules;

DROP TABLE routing_rules;

ALTER TABLE routing_rules_v5 RENAME TO routing_rules;
