//! A webhook receiver for the alert tests: a one-route HTTP server on 127.0.0.1 that
//! keeps each request's headers and raw body (the signature covers the raw bytes).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// What a webhook receiver saw: headers (lower-cased names) and the raw body.
pub type Received = Arc<Mutex<Vec<(Vec<(String, String)>, Vec<u8>)>>>;

/// A one-route HTTP server on 127.0.0.1 answering 204 to every POST, keeping what it got.
pub fn webhook() -> (String, Received) {
    webhook_answering("204 No Content", String::new())
}

/// The same, answering `status` with the header lines `extra` (each ending in CRLF).
pub fn webhook_answering(status: &'static str, extra: String) -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook?src=cg", listener.local_addr().unwrap());
    let got: Received = Arc::default();
    let keep = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut headers = Vec::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim() != "" {
                if let Some((k, v)) = line.trim().split_once(':') {
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
                }
                line.clear();
            }
            let len = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            keep.lock().unwrap().push((headers, body));
            let mut out = stream;
            let reply = format!(
                "HTTP/1.1 {status}\r\n{extra}content-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = out.write_all(reply.as_bytes());
        }
    });
    (url, got)
}
