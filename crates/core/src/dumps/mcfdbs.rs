//! Multicast forwarding tables as OpenSM dumps them (`opensm.mcfdbs`,
//! written after every multicast pass with `-D 0x43` and
//! `dump_files_dir`): per switch that forwards any MLID, a header and one
//! line per MLID listing the ports of its mask:
//!
//! ```text
//!
//! Switch 0x0000000000200000
//! LID    : Out Port(s)
//! 0xC000 : 0x001  0x003
//! ```
//!
//! Switches with empty tables are not listed. The file carries no group
//! SL and no member list: members are the CA ports the masks reach, and
//! the SL is supplied by whoever reads it (`to_groups`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::fabric::{Fabric, PortNum};
use crate::multicast::{GroupMft, MLID_START};

use super::DumpError;

pub const MCFDBS_FILE: &str = "opensm.mcfdbs";

const WHAT: &str = "multicast dump";

/// Per switch GUID, per MLID, the ports of the mask.
pub type Tables = BTreeMap<u64, BTreeMap<u16, Vec<u8>>>;

fn hex<T: TryFrom<u64>>(word: &str) -> Option<T> {
    let digits = word
        .strip_prefix("0x")
        .or_else(|| word.strip_prefix("0X"))?;
    T::try_from(u64::from_str_radix(digits, 16).ok()?).ok()
}

pub fn read(text: &str) -> Result<Tables, DumpError> {
    let mut tables = Tables::new();
    let mut current: Option<u64> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        let err = |m: &str| DumpError::new(WHAT, i + 1, m);
        if line.is_empty() || line.starts_with("LID") {
            continue;
        }
        if let Some(rest) = line.strip_prefix("Switch") {
            let guid = rest
                .split_whitespace()
                .next()
                .and_then(hex::<u64>)
                .ok_or_else(|| err("expected `Switch 0xGUID`"))?;
            tables.entry(guid).or_default();
            current = Some(guid);
            continue;
        }
        let (mlid, ports) = line
            .split_once(':')
            .ok_or_else(|| err("expected `0xMLID : 0xPORT ...` or `Switch 0xGUID`"))?;
        let mlid = hex::<u16>(mlid.trim())
            .filter(|&m| m >= MLID_START)
            .ok_or_else(|| err("expected a multicast LID (0xC000 to 0xFFFF) before ':'"))?;
        let guid = current.ok_or_else(|| err("an MLID line before any `Switch` header"))?;
        let mut mask = Vec::new();
        for word in ports.split_whitespace() {
            let port = hex::<u8>(word)
                .ok_or_else(|| err(&format!("'{word}' is not a port number (0x000 to 0x0FF)")))?;
            mask.push(port);
        }
        mask.sort_unstable();
        mask.dedup();
        tables
            .entry(guid)
            .or_default()
            .entry(mlid)
            .or_default()
            .extend(mask);
    }
    for groups in tables.values_mut() {
        for mask in groups.values_mut() {
            mask.sort_unstable();
            mask.dedup();
        }
    }
    Ok(tables)
}

/// The groups of `tables` on `fabric`'s switches, each on the SL `sl_of`
/// gives for its MLID. A switch the fabric does not have, or a port it
/// does not have, is an error (the dump is of another fabric).
pub fn to_groups(
    fabric: &Fabric,
    tables: &Tables,
    sl_of: &dyn Fn(u16) -> u8,
) -> Result<Vec<GroupMft>, DumpError> {
    let mut groups: BTreeMap<u16, GroupMft> = BTreeMap::new();
    for (&guid, mlids) in tables {
        let s = fabric.switch_with_guid(guid).ok_or_else(|| {
            DumpError::new(
                WHAT,
                0,
                format!(
                    "switch {guid:#018x} is not in the subnet list; are the dumps of one pass?"
                ),
            )
        })?;
        let slots = fabric.switch_node(s).port_slots();
        for (&mlid, ports) in mlids {
            let group = groups
                .entry(mlid)
                .or_insert_with(|| GroupMft::new(fabric, mlid, sl_of(mlid)));
            for &p in ports {
                if p as usize >= slots {
                    return Err(DumpError::new(
                        WHAT,
                        0,
                        format!(
                            "MLID {mlid:#06X} on {} uses port {p}, but the switch has {} ports",
                            fabric.describe_switch(s),
                            slots.saturating_sub(1)
                        ),
                    ));
                }
                group.add(s, PortNum::new(p));
            }
        }
    }
    Ok(groups.into_values().collect())
}

/// Writes `groups` in OpenSM's format (switches in GUID order).
pub fn write(fabric: &Fabric, groups: &[GroupMft]) -> String {
    let mut out = String::new();
    for s in fabric.switch_ids() {
        let mut first = true;
        let mut sorted: Vec<&GroupMft> = groups.iter().collect();
        sorted.sort_by_key(|g| g.mlid);
        for g in sorted.iter().filter(|g| !g.mask(s).is_empty()) {
            if first {
                let _ = write!(
                    out,
                    "\nSwitch {:#018x}\nLID    : Out Port(s)\n",
                    fabric.switch_node(s).guid
                );
                first = false;
            }
            let _ = write!(out, "0x{:04X} :", g.mlid);
            for p in g.mask(s) {
                let _ = write!(out, " 0x{:03X} ", p.raw());
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As OpenSM 3.3.23's `dump_mcast_routes` prints it (two spaces between
    /// ports, a trailing one).
    const SAMPLE: &str = "\nSwitch 0x0000000000200000\nLID    : Out Port(s)\n0xC000 : 0x001  0x003 \n0xC001 : 0x002 \n\nSwitch 0x0000000000200001\nLID    : Out Port(s)\n0xC000 : 0x004 \n";

    #[test]
    fn reads_opensm_format() {
        let t = read(SAMPLE).unwrap();
        assert_eq!(t[&0x200000][&0xC000], vec![1, 3]);
        assert_eq!(t[&0x200000][&0xC001], vec![2]);
        assert_eq!(t[&0x200001][&0xC000], vec![4]);
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let e = read("0xC000 : 0x001\n").unwrap_err();
        assert!(e.to_string().contains("before any `Switch`"), "{e}");
        let e = read("Switch 0x1\n0x0001 : 0x001\n").unwrap_err();
        assert!(e.to_string().contains("multicast LID"), "{e}");
        let e = read("Switch 0x1\n0xC000 : 0x1FF\n").unwrap_err();
        assert!(e.to_string().contains("'0x1FF' is not a port"), "{e}");
        assert!(read("Switch zz\n").is_err());
        assert!(read("garbage\n").is_err());
    }

    #[test]
    fn writes_what_it_reads() {
        let mut b = crate::gen::fattree::fattree(4, 2).unwrap();
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let mut g = GroupMft::new(&f, 0xC003, 0);
        let s = crate::fabric::SwitchId::new(1);
        g.add(s, PortNum::new(2));
        g.add(s, PortNum::new(1));
        let text = write(&f, std::slice::from_ref(&g));
        let back = to_groups(&f, &read(&text).unwrap(), &|_| 0).unwrap();
        assert_eq!(back, vec![g]);
    }
}
