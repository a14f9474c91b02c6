//! `mock-provider [--port N] [--name NAME] [--latency-ms MS] [--status CODE] [--words N]`: an
//! OpenAI-compatible upstream on 127.0.0.1 that answers every chat completion (streamed when
//! asked, one event per word; `--words N` makes the answer N words long) after an optional latency,
//! or fails every call with CODE.
//! Used by the local demo and the benchmarks; the tests script their own in-process mocks.

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::io::Result<()> {
    use cognigate::mock::{MockProvider, Reply};
    let args: Vec<String> = std::env::args().collect();
    let arg = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let port = arg("--port").and_then(|p| p.parse().ok()).unwrap_or(0);
    let name = arg("--name").unwrap_or_else(|| "mock-provider".to_owned());
    let latency = arg("--latency-ms")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mock = MockProvider::start_on(&name, port)?;
    let reply = match arg("--status").and_then(|s| s.parse::<u16>().ok()) {
        Some(status) => Reply::status(status),
        None => Reply::ok(),
    };
    let reply = match arg("--words").and_then(|n| n.parse().ok()) {
        Some(n) => reply.words(n),
        None => reply,
    };
    mock.set_default(reply.delay(latency));
    println!("{}", mock.url());
    loop {
        std::thread::park();
    }
}

#[cfg(target_arch = "wasm32")]
fn main() {}
