//! A plain stream's middle runs in the runtime (`src/edge/stream_pump.js`): its scan must ask the
//! relay about every event the relay acts on, or an error's text or a stripped usage chunk would
//! reach the caller. These run the pump's own JavaScript on node.

use cognigate::providers::anthropic::native::NativeDecoder;
use cognigate::stream::{Relay, RelayStep};
use cognigate::surfaces::messages_stream::NativeFilter;
use cognigate::usage::StreamUsage;
use std::path::Path;
use std::process::Command;

fn node(args: &[&str]) -> (bool, String) {
    let out = Command::new("node")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("node runs (make setup installs it)");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn the_pumps_own_tests_pass_on_node() {
    let (ok, text) = node(&["--test", "tests/host/stream/plain_events.test.mjs"]);
    assert!(ok, "{text}");
}

/// Whether the relay does anything to `event` but pass it (end, fail, strip or hold it), on a
/// chat stream or on a Messages stream passed to a Messages caller.
fn relay_acts_on(event: &str) -> bool {
    let bytes = event.as_bytes();
    let mut chat = Relay::metering(StreamUsage::chat(true));
    let chat_passes = matches!(chat.on_chunk(bytes), RelayStep::Forward(out) if out == bytes);
    let mut native = Relay::metering(StreamUsage::messages());
    let decoded = NativeDecoder::default().push(bytes);
    let native_passes = matches!(native.on_chunk(&decoded),
        RelayStep::Forward(out) if NativeFilter::default().push(&out) == bytes);
    !(chat_passes && native_passes)
}

/// Events spelled from the pieces the relay looks for: objects of keys and values it reads, with
/// spacing, and noise (a fixed generator, so a failure names its case).
fn events() -> Vec<String> {
    const KEYS: [&str; 8] = [
        "\"type\"",
        "\"usage\"",
        "\"error\"",
        "\"\\u0065rror\"",
        "\"\\u0075sage\"",
        "\"choices\"",
        "\"content\"",
        "\"usag\\u0065\"",
    ];
    const VALUES: [&str; 10] = [
        "\"message_stop\"",
        "\"content_block_delta\"",
        "null",
        "{}",
        "{\"prompt_tokens\":1}",
        "[]",
        "\"error\"",
        "1",
        "{\"message\":\"x\"}",
        "\"[DONE]\"",
    ];
    const NOISE: [&str; 10] = [
        "{", "}", ":", " ", "null", "error", "[DONE]", "\\\"", ",", "\"",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let space = ["", " ", "  "];
    let mut out = Vec::new();
    for _ in 0..20_000 {
        let body = if next(4) == 0 {
            (0..1 + next(8))
                .map(|_| NOISE[next(NOISE.len())])
                .collect::<String>()
        } else {
            let members: Vec<String> = (0..1 + next(3))
                .map(|_| {
                    let (s1, s2) = (space[next(3)], space[next(3)]);
                    format!(
                        "{}{s1}:{s2}{}",
                        KEYS[next(KEYS.len())],
                        VALUES[next(VALUES.len())]
                    )
                })
                .collect();
            format!("{{{}}}", members.join(","))
        };
        let head = [
            "event: error\n",
            "event: message_stop\n",
            "event: ping\n",
            "",
            "",
            "",
        ][next(6)];
        out.push(format!("{head}data: {body}\n\n"));
    }
    out
}

#[test]
fn the_pumps_scan_asks_the_relay_about_every_event_the_relay_acts_on() {
    let acted: Vec<String> = events().into_iter().filter(|e| relay_acts_on(e)).collect();
    assert!(
        acted.len() > 5_000,
        "the generator reaches the relay's cases"
    );
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join("acted_events.json");
    std::fs::write(&file, serde_json::to_vec(&acted).unwrap()).unwrap();
    let script = format!(
        "import {{ readFileSync }} from 'node:fs';\
         const src = readFileSync('src/edge/stream_pump.js', 'utf8');\
         const m = await import('data:text/javascript;base64,' + Buffer.from(src).toString('base64'));\
         const events = JSON.parse(readFileSync({:?}, 'utf8'));\
         const missed = events.filter((e) => !m.needsRelay(new TextEncoder().encode(e)));\
         console.log(JSON.stringify(missed.slice(0, 5)));\
         process.exit(missed.length === 0 ? 0 : 1);",
        file.display().to_string()
    );
    let (ok, text) = node(&["--input-type=module", "-e", &script]);
    assert!(
        ok,
        "events the relay acts on that the scan would pass: {text}"
    );
}
