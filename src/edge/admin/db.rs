//! The admin handlers' D1 helpers: statements, batches, spec rows, existence checks.

use super::*;

impl Admin<'_> {
    pub(super) fn stmt(
        &self,
        sql: &str,
        params: &[JsValue],
    ) -> Result<D1PreparedStatement, ApiError> {
        self.db
            .prepare(sql)
            .bind(params)
            .map_err(|e| storage_error("bind", e))
    }

    pub(super) async fn run(&self, sql: &str, params: &[JsValue]) -> Result<D1Result, ApiError> {
        self.stmt(sql, params)?
            .run()
            .await
            .map_err(|e| storage_error("write", e))
    }

    pub(super) async fn all<T: DeserializeOwned>(
        &self,
        sql: &str,
        params: &[JsValue],
    ) -> Result<Vec<T>, ApiError> {
        let r = self
            .stmt(sql, params)?
            .all()
            .await
            .map_err(|e| storage_error("read", e))?;
        rows(&r)
    }

    pub(super) async fn batch(
        &self,
        stmts: Vec<D1PreparedStatement>,
    ) -> Result<Vec<D1Result>, worker::Error> {
        self.db.batch(stmts).await
    }

    pub(super) fn now_js(&self) -> JsValue {
        JsValue::from_f64(self.now as f64)
    }

    pub(super) async fn require_tenant(&self, t: &TenantId) -> Result<(), ApiError> {
        #[derive(Deserialize)]
        struct One {}
        let found: Vec<One> = self
            .all(
                "SELECT 1 AS one FROM tenants WHERE id = ?1",
                &[js(t.as_str())],
            )
            .await?;
        if found.is_empty() {
            return Err(ApiError::not_found(&format!("Tenant '{t}'")));
        }
        Ok(())
    }

    pub(super) async fn specs<T: DeserializeOwned>(
        &self,
        table: &str,
        t: &TenantId,
    ) -> Result<Vec<T>, ApiError> {
        let sql = format!("SELECT spec FROM {table} WHERE tenant_id = ?1 ORDER BY rowid");
        let rows: Vec<Spec> = self.all(&sql, &[js(t.as_str())]).await?;
        rows.iter().map(|r| store::parse_stored(&r.spec)).collect()
    }

    pub(super) async fn spec<T: DeserializeOwned>(
        &self,
        table: &str,
        key_col: &str,
        t: &TenantId,
        key: &str,
        what: &str,
    ) -> Result<T, ApiError> {
        let sql = format!("SELECT spec FROM {table} WHERE tenant_id = ?1 AND {key_col} = ?2");
        let rows: Vec<Spec> = self.all(&sql, &[js(t.as_str()), js(key)]).await?;
        let row = rows
            .first()
            .ok_or_else(|| ApiError::not_found(&format!("The {what} '{key}'")))?;
        store::parse_stored(&row.spec)
    }

    pub(super) async fn delete_row(
        &self,
        table: &str,
        key_col: &str,
        t: &TenantId,
        key: &str,
        what: &str,
    ) -> HttpReply {
        let sql = format!("DELETE FROM {table} WHERE tenant_id = ?1 AND {key_col} = ?2");
        let r = self.run(&sql, &[js(t.as_str()), js(key)]).await?;
        if changes(&r) == 0 {
            return Err(ApiError::not_found(&format!("The {what} '{key}'")));
        }
        http::json(200, &json!({"deleted": key}))
    }
}
