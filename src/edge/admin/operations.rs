//! Settings, breaker events and manual breaker resets.

use super::*;

impl Admin<'_> {
    pub(super) async fn get_settings(&self, t: &TenantId) -> HttpReply {
        let cfg = store::load_config(self.env, t, &self.dep.defaults)
            .await?
            .ok_or_else(|| ApiError::not_found(&format!("Tenant '{t}'")))?;
        http::json(200, &cfg.settings)
    }

    pub(super) async fn put_settings(&self, t: &TenantId, body: &[u8]) -> HttpReply {
        let overrides = parse_body::<SettingsOverrides>(body)
            .and_then(validate_settings)
            .map_err(config_error)?;
        let effective = self.dep.defaults.effective(&overrides);
        let cfg = store::load_config(self.env, t, &self.dep.defaults)
            .await?
            .ok_or_else(|| ApiError::not_found(&format!("Tenant '{t}'")))?;
        let too_long: Vec<String> = cfg
            .rules
            .iter()
            .filter(|(_, c)| c.len() > effective.max_fallback_depth as usize)
            .map(|(m, c)| format!("'{m}' ({} entries)", c.len()))
            .collect();
        if !too_long.is_empty() {
            return Err(config_error(ConfigError::invalid(
                "max_fallback_depth",
                format!(
                    "{} would be below the chain length of routing rules {}",
                    effective.max_fallback_depth,
                    too_long.join(", ")
                ),
            )));
        }
        let stored = serde_json::to_string(&overrides).map_err(|_| ApiError::internal())?;
        self.run(
            "UPDATE tenants SET settings = ?2 WHERE id = ?1",
            &[js(t.as_str()), js(&stored)],
        )
        .await?;
        http::json(200, &effective)
    }

    // ---- events and breakers ----------------------------------------------------------------

    pub(super) async fn list_events(&self, t: &TenantId, query: Option<&str>) -> HttpReply {
        let since = match query_param(query, "since") {
            None => 0,
            Some(v) => v.parse::<u64>().map_err(|_| {
                ApiError::invalid_request(
                    400,
                    "invalid_request",
                    "'since' must be epoch milliseconds.",
                )
                .with_param("since")
            })?,
        };
        #[derive(Deserialize)]
        struct Row {
            seq: u64,
            body: String,
        }
        let rows: Vec<Row> = self
            .all(
                "SELECT seq, body FROM events WHERE tenant_id = ?1 AND at >= ?2 ORDER BY seq LIMIT 1000",
                &[js(t.as_str()), JsValue::from_f64(since as f64)],
            )
            .await?;
        let data = rows
            .iter()
            .map(|r| {
                let mut v: Value = store::parse_stored(&r.body)?;
                v["seq"] = json!(r.seq);
                Ok(v)
            })
            .collect::<Result<Vec<Value>, ApiError>>()?;
        http::json(200, &json!({"data": data}))
    }

    pub(super) async fn reset_breakers(&self, t: &TenantId, body: &[u8]) -> HttpReply {
        let target: BreakerReset = if body.iter().all(u8::is_ascii_whitespace) {
            BreakerReset::default()
        } else {
            parse_body(body).map_err(config_error)?
        };
        let names = self.provider_names(t).await?;
        let providers: Vec<String> = match &target.provider {
            Some(p) if !names.iter().any(|n| n == p.as_str()) => {
                return Err(ApiError::not_found(&format!("The provider '{p}'")))
            }
            Some(p) => vec![p.to_string()],
            None => names,
        };
        let request = serde_json::to_string(&ResetRequest {
            model: target.model.map(|m| m.to_string()),
        })
        .ok();
        // This isolate's own grants and skips end at once; other isolates see the reset within
        // their lease.
        crate::edge::local_grants::news_for_tenant(t);
        let mut closed = Vec::new();
        for p in providers {
            let transitions: Vec<ModelTransition> =
                call_object(self.env, t, &p, Method::Post, "/reset", request.clone())
                    .await
                    .map_err(|e| storage_error("reset breakers", e))?;
            closed.extend(
                transitions
                    .iter()
                    .map(|tr| json!({"provider": p, "model": tr.model})),
            );
            record_transitions(self.env, self.ctx, t, &p, transitions);
        }
        http::json(200, &json!({"closed": closed}))
    }
}
