//! `loadgen`: the one load tool the benchmark drives every system with. Closed-loop: each of
//! `--concurrency` workers keeps one keep-alive HTTP/1.1 connection and sends the next request as
//! soon as the previous answer is complete. Prints one JSON line: requests/s, latency p50/p99,
//! time to first body byte p50/p99 (streams), errors, and a sample of response headers.
//!
//!   loadgen --url URL --concurrency N --seconds S [--body JSON] [--header "k: v"]... [--warmup S]

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::main();
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::io::{self, BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    use std::time::{Duration, Instant};

    struct Args {
        host: String,
        path: String,
        concurrency: usize,
        seconds: f64,
        warmup: f64,
        body: Option<String>,
        headers: Vec<String>,
    }

    fn args() -> Result<Args, String> {
        let argv: Vec<String> = std::env::args().collect();
        let get = |flag: &str| {
            argv.iter()
                .position(|a| a == flag)
                .and_then(|i| argv.get(i + 1))
                .cloned()
        };
        let url = get("--url").ok_or("--url is required")?;
        let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
        let (host, path) = rest
            .split_once('/')
            .map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
        let headers = argv
            .windows(2)
            .filter(|w| w[0] == "--header")
            .map(|w| w[1].clone())
            .collect();
        Ok(Args {
            host: host.to_owned(),
            path,
            concurrency: get("--concurrency")
                .and_then(|c| c.parse().ok())
                .unwrap_or(1),
            seconds: get("--seconds").and_then(|c| c.parse().ok()).unwrap_or(5.0),
            warmup: get("--warmup").and_then(|c| c.parse().ok()).unwrap_or(1.0),
            body: get("--body"),
            headers,
        })
    }

    struct Sample {
        latency_us: u64,
        ttfb_us: u64,
        ok: bool,
    }

    struct Conn {
        reader: BufReader<TcpStream>,
        writer: TcpStream,
    }

    fn connect(host: &str) -> io::Result<Conn> {
        let s = TcpStream::connect(host)?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(Duration::from_secs(60)))?;
        Ok(Conn {
            reader: BufReader::with_capacity(64 * 1024, s.try_clone()?),
            writer: s,
        })
    }

    /// Sends one request and reads the whole answer. Returns (status, ttfb, keep-alive, headers).
    fn exchange(
        c: &mut Conn,
        request: &[u8],
        start: Instant,
    ) -> io::Result<(u16, Duration, bool, Vec<String>)> {
        c.writer.write_all(request)?;
        let mut line = String::new();
        if c.reader.read_line(&mut line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed"));
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut headers = Vec::new();
        let (mut length, mut chunked, mut close) = (None, false, false);
        loop {
            line.clear();
            c.reader.read_line(&mut line)?;
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let lower = l.to_ascii_lowercase();
            if let Some(v) = lower.strip_prefix("content-length:") {
                length = v.trim().parse::<usize>().ok();
            } else if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            } else if lower.starts_with("connection:") && lower.contains("close") {
                close = true;
            }
            headers.push(l.to_owned());
        }
        let mut ttfb = None;
        let mark = |ttfb: &mut Option<Duration>| {
            if ttfb.is_none() {
                *ttfb = Some(start.elapsed());
            }
        };
        if chunked {
            loop {
                line.clear();
                c.reader.read_line(&mut line)?;
                let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "chunk size"))?;
                if size == 0 {
                    line.clear();
                    c.reader.read_line(&mut line)?;
                    break;
                }
                mark(&mut ttfb);
                io::copy(&mut (&mut c.reader).take(size as u64), &mut io::sink())?;
                line.clear();
                c.reader.read_line(&mut line)?;
            }
        } else if let Some(n) = length {
            if n > 0 {
                c.reader.fill_buf()?;
                mark(&mut ttfb);
            }
            io::copy(&mut (&mut c.reader).take(n as u64), &mut io::sink())?;
        } else {
            mark(&mut ttfb);
            io::copy(&mut c.reader, &mut io::sink())?;
            close = true;
        }
        Ok((
            status,
            ttfb.unwrap_or_else(|| start.elapsed()),
            !close,
            headers,
        ))
    }

    fn worker(
        a: &Args,
        request: &[u8],
        until: Instant,
        record_after: Instant,
    ) -> (Vec<Sample>, u64, Vec<String>) {
        let mut samples = Vec::new();
        let mut errors = 0;
        let mut headers_seen = Vec::new();
        let mut conn: Option<Conn> = None;
        while Instant::now() < until {
            let c = match conn.take().map_or_else(|| connect(&a.host), Ok) {
                Ok(c) => c,
                Err(_) => {
                    errors += 1;
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            let mut c = c;
            let start = Instant::now();
            match exchange(&mut c, request, start) {
                Ok((status, ttfb, keep, headers)) => {
                    if start >= record_after {
                        samples.push(Sample {
                            latency_us: start.elapsed().as_micros() as u64,
                            ttfb_us: ttfb.as_micros() as u64,
                            ok: (200..300).contains(&status),
                        });
                    }
                    if headers_seen.is_empty() {
                        headers_seen = headers;
                    }
                    if keep {
                        conn = Some(c);
                    }
                }
                Err(_) => errors += 1,
            }
        }
        (samples, errors, headers_seen)
    }

    fn pct(sorted: &[u64], p: f64) -> f64 {
        if sorted.is_empty() {
            return 0.0;
        }
        let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted[i] as f64 / 1000.0
    }

    pub fn main() {
        let a = match args() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("loadgen: {e}");
                std::process::exit(2);
            }
        };
        let method = if a.body.is_some() { "POST" } else { "GET" };
        let mut request = format!("{method} {} HTTP/1.1\r\nHost: {}\r\n", a.path, a.host);
        for h in &a.headers {
            request.push_str(h);
            request.push_str("\r\n");
        }
        if let Some(b) = &a.body {
            request.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
                b.len()
            ));
        } else {
            request.push_str("\r\n");
        }
        let begin = Instant::now();
        let record_after = begin + Duration::from_secs_f64(a.warmup);
        let until = record_after + Duration::from_secs_f64(a.seconds);
        let results: Vec<(Vec<Sample>, u64, Vec<String>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..a.concurrency)
                .map(|_| s.spawn(|| worker(&a, request.as_bytes(), until, record_after)))
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        let mut lat: Vec<u64> = Vec::new();
        let mut ttfb: Vec<u64> = Vec::new();
        let (mut non2xx, mut errors) = (0u64, 0u64);
        let mut headers = Vec::new();
        for (samples, e, h) in results {
            errors += e;
            if headers.is_empty() {
                headers = h;
            }
            for s in samples {
                lat.push(s.latency_us);
                ttfb.push(s.ttfb_us);
                if !s.ok {
                    non2xx += 1;
                }
            }
        }
        lat.sort_unstable();
        ttfb.sort_unstable();
        let out = serde_json::json!({
            "concurrency": a.concurrency,
            "seconds": a.seconds,
            "requests": lat.len(),
            "rps": lat.len() as f64 / a.seconds,
            "p50_ms": pct(&lat, 0.50),
            "p99_ms": pct(&lat, 0.99),
            "ttfb_p50_ms": pct(&ttfb, 0.50),
            "ttfb_p99_ms": pct(&ttfb, 0.99),
            "non_2xx": non2xx,
            "errors": errors,
            "headers": headers,
        });
        println!("{out}");
    }
}
