//! CIDR blocks for `IpAddress` / `NotIpAddress`, IPv4 and IPv6, hand-written (a dozen lines do not need a crate).

use std::net::IpAddr;

/// An address block: a network address and a prefix length. A bare address is a /32 (or /128).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cidr {
    network: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `203.0.113.0/24`, `2001:db8::/32` or a bare address. Host bits may be set (IAM ignores them).
    pub(crate) fn parse(s: &str) -> Option<Cidr> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let network: IpAddr = addr.trim().parse().ok()?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) if !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()) => {
                p.parse().ok()?
            }
            Some(_) => return None,
            None => max,
        };
        (prefix <= max).then_some(Cidr { network, prefix })
    }

    /// Whether the block holds `ip`. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is compared as IPv4, since a
    /// dual-stack listener reports IPv4 clients that way.
    pub(crate) fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.network, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                masked(u128::from(u32::from(n)), 32, self.prefix)
                    == masked(u128::from(u32::from(a)), 32, self.prefix)
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                masked(u128::from(n), 128, self.prefix) == masked(u128::from(a), 128, self.prefix)
            }
            _ => false,
        }
    }
}

/// The top `prefix` bits of a `width`-bit number.
fn masked(value: u128, width: u32, prefix: u8) -> u128 {
    let keep = u32::from(prefix).min(width);
    if keep == 0 {
        0
    } else {
        value >> (width - keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cidr_blocks() {
        for (block, ip, inside) in [
            ("203.0.113.0/24", "203.0.113.7", true),
            ("203.0.113.0/24", "203.0.114.7", false),
            ("203.0.113.5", "203.0.113.5", true),
            ("203.0.113.5/32", "203.0.113.6", false),
            ("0.0.0.0/0", "8.8.8.8", true),
            ("10.0.0.0/8", "10.255.1.1", true),
            ("10.1.2.3/8", "10.9.9.9", true),
            ("10.0.0.0/8", "::ffff:10.1.1.1", true),
            ("2001:db8::/32", "2001:db8:1::1", true),
            ("2001:db8::/32", "2001:db9::1", false),
            ("::/0", "::1", true),
            ("::1/128", "::1", true),
            ("10.0.0.0/8", "2001:db8::1", false),
            ("2001:db8::/32", "10.0.0.1", false),
        ] {
            let cidr = Cidr::parse(block).unwrap();
            assert_eq!(cidr.contains(ip.parse().unwrap()), inside, "{block} ∋ {ip}");
        }
        for bad in [
            "",
            "10.0.0.0/33",
            "::/129",
            "10.0.0/8",
            "10.0.0.0/",
            "10.0.0.0/-1",
            "10.0.0.0/+8",
            "host",
            "1/1/1",
        ] {
            assert_eq!(Cidr::parse(bad), None, "{bad}");
        }
    }
}
