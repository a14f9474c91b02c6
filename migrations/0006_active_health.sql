-- Issue 25: a tenant's webhook signing secret, sealed under CG_KEK like a provider key (never the
-- secret itself). Generated when `alerts.webhook_url` is set, rotated with the URL.
ALTER TABLE tenants ADD COLUMN alert_secret TEXT;
