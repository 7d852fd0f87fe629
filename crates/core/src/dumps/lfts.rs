//! Linear forwarding tables as OpenSM dumps them (`opensm-lfts.dump`) and
//! as `ibroute` prints them from a switch:
//!
//! ```text
//! Unicast lids [0-108] of switch Lid 2 guid 0x0000000000200000 ('sw0'):
//! 0x0001 001 # Channel Adapter portguid 0x0000000000100001: 'h0'
//! ```
//!
//! (ibroute prints two column-header lines and `: (...)` instead of `# ...`;
//! both are accepted.) Tables are keyed by switch node GUID.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::fabric::{Fabric, Lid, PortNum};
use crate::routing::{Lft, Routing};

use super::DumpError;

/// Per switch GUID, the (LID, port) entries.
pub type Tables = HashMap<u64, Vec<(u16, u8)>>;

pub fn read(text: &str) -> Result<Tables, DumpError> {
    let mut tables = Tables::new();
    let mut current: Option<u64> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.starts_with("Unicast lids") {
            let guid = line
                .split_whitespace()
                .skip_while(|w| *w != "guid")
                .nth(1)
                .and_then(|g| u64::from_str_radix(g.trim_start_matches("0x"), 16).ok())
                .ok_or_else(|| {
                    DumpError::new(
                        "LFT dump",
                        i + 1,
                        "expected `guid 0x...` in the switch header",
                    )
                })?;
            tables.entry(guid).or_default();
            current = Some(guid);
        } else if let Some(hex) = line.strip_prefix("0x") {
            let mut words = hex.split_whitespace();
            let lid = words.next().and_then(|w| u16::from_str_radix(w, 16).ok());
            let port = words.next().and_then(|w| w.parse::<u8>().ok());
            let (Some(lid), Some(port)) = (lid, port) else {
                return Err(DumpError::new("LFT dump", i + 1, "expected `0xLID PORT`"));
            };
            let guid = current.ok_or_else(|| {
                DumpError::new("LFT dump", i + 1, "entry before any switch header")
            })?;
            tables.entry(guid).or_default().push((lid, port));
        }
    }
    Ok(tables)
}

/// Turns read tables into per-switch LFTs of `fabric`; switches missing
/// from the dump are an error.
pub fn to_lfts(fabric: &Fabric, tables: &Tables) -> Result<Vec<Lft>, DumpError> {
    fabric
        .switch_ids()
        .map(|s| {
            let node = fabric.switch_node(s);
            let entries = tables.get(&node.guid).ok_or_else(|| {
                DumpError::new(
                    "LFT dump",
                    0,
                    format!("no table for switch {:#018x} ({})", node.guid, node.desc),
                )
            })?;
            let mut lft = Lft::new(fabric.lft_len());
            for &(lid, port) in entries {
                lft.set(Lid::from_raw(lid), PortNum::new(port));
            }
            Ok(lft)
        })
        .collect()
}

/// Writes `routing`'s tables in OpenSM's format.
pub fn write(fabric: &Fabric, routing: &Routing) -> String {
    let mut out = String::new();
    for si in fabric.switch_ids() {
        let node = fabric.switch_node(si);
        let lid = node.port(0).map_or(Lid::NONE, |p| p.lid);
        let _ = writeln!(
            out,
            "Unicast lids [0-{}] of switch Lid {lid} guid {:#018x} ('{}'):",
            fabric.max_lid(),
            node.guid,
            node.desc
        );
        for (l, &port) in routing.lfts[si].as_bytes().iter().enumerate().skip(1) {
            if !PortNum::new(port).is_no_path() {
                let _ = writeln!(out, "0x{l:04X} {port:03}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_opensm_and_ibroute_formats() {
        let opensm = "Unicast lids [0-4] of switch Lid 2 guid 0x0000000000200000 ('s'):\n0x0001 001 # Channel Adapter\n0x0002 000 # Switch\n";
        let ibroute = "Unicast lids [0x0-0x4] of switch Lid 2 guid 0x0000000000200000 (s):\n  Lid  Out   Destination\n       Port     Info \n0x0001 001 : (Channel Adapter portguid 0x1: 'h')\n0x0002 000 : (Switch)\n";
        assert_eq!(read(opensm).unwrap(), read(ibroute).unwrap());
        assert_eq!(read(opensm).unwrap()[&0x200000], vec![(1, 1), (2, 0)]);
        assert!(read("0x0001 001\n").is_err());
    }
}
