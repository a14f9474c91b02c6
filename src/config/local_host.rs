//! Which hosts are the deployment's own or a private network's, for a URL the gateway POSTs to on
//! a tenant's word (a webhook): such a URL would let a tenant reach what only the deployment
//! should (a metadata service, a loopback admin port, a host on the private network). Decided on
//! the host as the `url` crate parsed it, so every spelling `fetch` would read as the same
//! address (`2130706433`, `0x7f.1`, `0177.0.0.1`, `[::ffff:127.0.0.1]`) is that address here.
//! A public name that resolves to a private address is not seen here: no lookup is made.

use std::net::{Ipv4Addr, Ipv6Addr};
use url::Host;

/// `localhost` or a name under it, or an address that is not public unicast: unspecified,
/// loopback, private, shared (carrier-grade NAT), link-local, unique-local, multicast, reserved,
/// and an IPv6 form carrying such an IPv4 address (mapped, compatible, NAT64).
pub fn is_local(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Host::Ipv4(a) => local_v4(*a),
        Host::Ipv6(a) => local_v6(*a),
    }
}

fn local_v4(a: Ipv4Addr) -> bool {
    let [first, second, ..] = a.octets();
    first == 0 // "this network", 0.0.0.0 among it
        || a.is_loopback()
        || a.is_private()
        || a.is_link_local()
        || (first == 100 && (64..128).contains(&second)) // shared, 100.64/10
        || first >= 224 // multicast, reserved, broadcast
}

fn local_v6(a: Ipv6Addr) -> bool {
    let s = a.segments();
    let embedded = |hi: &[u16]| {
        let [.., x, y] = s;
        let v4 = Ipv4Addr::from((u32::from(x) << 16) | u32::from(y));
        s.starts_with(hi) && local_v4(v4)
    };
    a.is_unspecified()
        || a.is_loopback()
        || (s[0] & 0xffc0) == 0xfe80 // link-local, fe80::/10
        || (s[0] & 0xffc0) == 0xfec0 // site-local (deprecated), fec0::/10
        || (s[0] & 0xfe00) == 0xfc00 // unique-local, fc00::/7
        || (s[0] & 0xff00) == 0xff00 // multicast
        || embedded(&[0, 0, 0, 0, 0, 0xffff]) // IPv4-mapped
        || embedded(&[0, 0, 0, 0, 0, 0]) // IPv4-compatible
        || embedded(&[0x64, 0xff9b, 0, 0, 0, 0]) // NAT64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(url: &str) -> bool {
        let parsed = url::Url::parse(url).unwrap();
        is_local(&parsed.host().unwrap())
    }

    #[test]
    fn loopback_private_link_local_and_unique_local_hosts_are_local_in_every_spelling() {
        for url in [
            "https://127.0.0.1/hook",
            "https://127.9.9.9/",
            "https://localhost/x",
            "https://LOCALHOST./x",
            "https://api.localhost/x",
            "https://10.0.0.1/",
            "https://172.16.0.1/",
            "https://172.31.255.255/",
            "https://192.168.1.1/",
            "https://169.254.169.254/latest/meta-data",
            "https://100.64.0.1/",
            "https://0.0.0.0/",
            "https://255.255.255.255/",
            "https://[::1]/",
            "https://[::]/",
            "https://[fe80::1]/",
            "https://[fd00::1]/",
            "https://[fc00::1]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::ffff:a9fe:a9fe]/",
            "https://[::10.0.0.1]/",
            "https://[64:ff9b::192.168.0.1]/",
            // Other spellings of 127.0.0.1 and 10.0.0.1 that the URL parser normalises.
            "https://2130706433/",
            "https://0x7f000001/",
            "https://0x7f.1/",
            "https://0177.0.0.1/",
            "https://127.1/",
            "https://127.0.0.1./",
            "https://012.0.0.1/",
        ] {
            assert!(local(url), "{url} was taken as public");
        }
    }

    #[test]
    fn public_hosts_are_not_local() {
        for url in [
            "https://hooks.example.com/x",
            "https://localhost.example.com/x",
            "https://8.8.8.8/",
            "https://172.32.0.1/",
            "https://100.128.0.1/",
            "https://[2606:4700::1111]/",
            "https://[::ffff:8.8.8.8]/",
            "https://[64:ff9b::8.8.8.8]/",
        ] {
            assert!(!local(url), "{url} was taken as local");
        }
    }
}
