//! Forwards every request to `UPSTREAM_URL` and returns the answer as it comes.
use worker::*;

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    let upstream = env.var("UPSTREAM_URL")?.to_string();
    let mut init = RequestInit::new();
    init.with_method(req.method())
        .with_headers(req.headers().clone())
        .with_body(req.inner().body().map(Into::into));
    Fetch::Request(Request::new_with_init(&upstream, &init)?)
        .send()
        .await
}
