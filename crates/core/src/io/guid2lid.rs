//! OpenSM's `guid2lid` cache (in `$OSM_CACHE_DIR`, by default
//! /var/cache/opensm): the LIDs OpenSM assigned, by port GUID, which it
//! reuses on restart. Applying it to a fabric read from a net file or from
//! ibnetdiscover lets offline runs route with the LIDs production uses.
//!
//! OpenSM writes one entry per port GUID that ever had a LID, as
//!
//! ```text
//! 0x0000000000100001 0x0002 0x0003
//!
//! 0x0000000000200000 0x0004 0x0004
//! ```
//!
//! the port GUID, the base LID and the top LID (base + 2^LMC - 1), each
//! entry followed by a blank line, in hash order. Entries of ports that have
//! left the fabric stay in the file, so extra GUIDs are normal.
//!
//! Port GUIDs in `FabricBuilder`: switches answer with the node GUID on
//! port 0; CA ports are the node GUID plus the port number, as ibsim numbers
//! them (checked against OpenSM's guid2lid under ibsim) unless the source
//! (ibnetdiscover, opensm-subnet.lst) named the real port GUIDs.

use std::collections::HashMap;

use crate::fabric::{describe, FabricBuilder, NodeKind};

/// What is wrong with a guid2lid file, or what it lacks for a fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guid2LidError {
    /// A line that is not `0xPORT_GUID 0xBASE_LID 0xTOP_LID`.
    Line { line: usize, message: String },
    /// An end port of the fabric that the file does not list.
    MissingPort { guid: u64, port: String },
}

impl std::fmt::Display for Guid2LidError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Guid2LidError::Line { line, message } => write!(f, "guid2lid line {line}: {message}"),
            Guid2LidError::MissingPort { guid, port } => write!(
                f,
                "guid2lid has no LID for port GUID {guid:#018x} ({port}); the file is from another fabric, \
                 or OpenSM has not yet brought this port up (let it sweep the whole subnet, then copy its cache)"
            ),
        }
    }
}

impl std::error::Error for Guid2LidError {}

/// A LID range as OpenSM stores it: base LID and LMC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LidRange {
    pub base: u16,
    pub lmc: u8,
}

/// The parsed file: LID range by port GUID.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Guid2Lid {
    lids: HashMap<u64, LidRange>,
}

impl Guid2Lid {
    /// Reads the file. A GUID listed twice with different LIDs is an error
    /// (OpenSM would log ERR 6106 and keep one of them).
    pub fn read(text: &str) -> Result<Guid2Lid, Guid2LidError> {
        let mut lids = HashMap::new();
        let mut first_line: HashMap<u64, usize> = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let words: Vec<&str> = raw.split_whitespace().collect();
            if words.is_empty() {
                continue;
            }
            let err = |message: String| Guid2LidError::Line { line, message };
            let [guid, base, top] = words[..] else {
                return Err(err(format!(
                    "expected `0xPORT_GUID 0xBASE_LID 0xTOP_LID`, found {} field(s)",
                    words.len()
                )));
            };
            let guid = number(guid).ok_or_else(|| err(format!("bad port GUID '{guid}'")))?;
            let lid = |w: &str| {
                number(w)
                    .and_then(|v| u16::try_from(v).ok())
                    .filter(|&v| v != 0)
            };
            let base = lid(base)
                .ok_or_else(|| err(format!("bad base LID '{base}' (expected 0x0001..0xffff)")))?;
            let top = lid(top)
                .ok_or_else(|| err(format!("bad top LID '{top}' (expected 0x0001..0xffff)")))?;
            let count = u32::from(top) + 1 - u32::from(base.min(top));
            if top < base || !count.is_power_of_two() || count > 128 {
                return Err(err(format!(
                    "LIDs {base:#06x}..{top:#06x} are not a range of 2^LMC LIDs (LMC 0..=7)"
                )));
            }
            let range = LidRange {
                base,
                lmc: count.trailing_zeros() as u8,
            };
            if let Some(old) = lids.insert(guid, range) {
                if old != range {
                    return Err(err(format!(
                        "port GUID {guid:#018x} is listed again (first on line {}) with other LIDs; \
                         remove the stale entry",
                        first_line.get(&guid).copied().unwrap_or(line)
                    )));
                }
            }
            first_line.entry(guid).or_insert(line);
        }
        Ok(Guid2Lid { lids })
    }

    pub fn get(&self, port_guid: u64) -> Option<LidRange> {
        self.lids.get(&port_guid).copied()
    }

    pub fn len(&self) -> usize {
        self.lids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lids.is_empty()
    }

    /// Gives every end port of `fabric` (switch port 0, CA ports) the LID
    /// and LMC the file holds for its port GUID, and sets the subnet LMC to
    /// the largest CA-port LMC (what OpenSM's `lmc` option gives CAs). Fails
    /// on the first end port the file lacks, leaving earlier ports changed.
    pub fn apply(&self, fabric: &mut FabricBuilder) -> Result<(), Guid2LidError> {
        let mut subnet_lmc = 0;
        for at in fabric.end_ports() {
            let node = fabric.node(at.node);
            let Some(guid) = node.port(at.port).map(|p| p.guid) else {
                continue;
            };
            let range = self.get(guid).ok_or_else(|| Guid2LidError::MissingPort {
                guid,
                port: format!("port {} of {}", at.port, describe(node)),
            })?;
            if node.kind == NodeKind::Ca {
                subnet_lmc = subnet_lmc.max(range.lmc);
            }
            // end_ports() only names existing ports, so this cannot fail.
            if let Ok(port) = fabric.port_mut(at) {
                port.lid = crate::fabric::Lid::from_raw(range.base);
                port.lmc = range.lmc;
            }
        }
        fabric.set_lmc(subnet_lmc);
        Ok(())
    }
}

/// `fabric`'s end ports and their LIDs as OpenSM's guid2lid file: what
/// OpenSM (with `reassign_lids FALSE`, its default) reads from its cache
/// directory at start and keeps, so an operator can hand it a numbering
/// (`osmroute lids`). Ports without a LID are left out.
pub fn write(fabric: &FabricBuilder) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for at in fabric.end_ports() {
        let Some(port) = fabric.node(at.node).port(at.port) else {
            continue;
        };
        let base = port.lid.raw();
        if base == 0 {
            continue;
        }
        let top = u32::from(base) + (1u32 << port.lmc) - 1;
        // Writing into a String cannot fail.
        let _ = write!(out, "0x{:016x} 0x{base:04x} 0x{top:04x}\n\n", port.guid);
    }
    out
}

/// A number as OpenSM's `strtoul(.., 0)` reads the file's: `0x` hex, else
/// decimal.
fn number(w: &str) -> Option<u64> {
    match w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => w.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: usize) -> crate::fabric::NodeId {
        crate::fabric::NodeId::new(i)
    }
    use crate::fabric::PortRef;

    /// OpenSM 3.3.23's guid2lid after one sweep of `NET` under ibsim with
    /// `lmc 1` (OSM_CACHE_DIR set to the run directory).
    const CACHE: &str = "0x0000000000100004 0x0008 0x0009\n\n0x0000000000100006 0x000a 0x000b\n\n\
                         0x0000000000200000 0x0004 0x0004\n\n0x0000000000200001 0x0005 0x0005\n\n\
                         0x0000000000100001 0x0002 0x0003\n\n0x0000000000100002 0x0006 0x0007\n\n";

    /// The fabric of that run as ibsim numbers it: GUIDs in file order,
    /// node GUID first, then one per CA port (h0 has two ports, so h1 is
    /// 0x100003); `add_node` gives CA ports node GUID + port number.
    fn simulated() -> FabricBuilder {
        let mut b = FabricBuilder::new();
        let h0 = b.add_node(NodeKind::Ca, 0x10_0000, "h0", 2);
        let h1 = b.add_node(NodeKind::Ca, 0x10_0003, "h1", 1);
        let h2 = b.add_node(NodeKind::Ca, 0x10_0005, "h2", 1);
        let s0 = b.add_node(NodeKind::Switch, 0x20_0000, "s0", 8);
        let s1 = b.add_node(NodeKind::Switch, 0x20_0001, "s1", 8);
        for (a, z) in [
            ((h0, 1), (s0, 1)),
            ((h0, 2), (s1, 1)),
            ((h1, 1), (s0, 2)),
            ((h2, 1), (s1, 2)),
            ((s0, 5), (s1, 5)),
        ] {
            b.connect(PortRef::new(a.0, a.1), PortRef::new(z.0, z.1))
                .unwrap();
        }
        b
    }

    #[test]
    fn reads_opensm_entries() {
        let g = Guid2Lid::read(CACHE).unwrap();
        assert_eq!(g.len(), 6);
        assert_eq!(g.get(0x10_0001), Some(LidRange { base: 2, lmc: 1 }));
        assert_eq!(g.get(0x20_0000), Some(LidRange { base: 4, lmc: 0 }));
        assert_eq!(g.get(0x10_0000), None);
    }

    #[test]
    fn applies_lids_by_port_guid() {
        let mut b = simulated();
        Guid2Lid::read(CACHE).unwrap().apply(&mut b).unwrap();
        let f = b.build().unwrap();
        assert_eq!(f.lmc(), 1);
        let h0_port2 = f.node(n(0)).port(2).unwrap();
        assert_eq!((h0_port2.lid.raw(), h0_port2.lmc), (6, 1));
        assert_eq!(f.node(n(4)).port(0).unwrap().lid, 5, "switch s1");
        assert_eq!(
            f.lid_owner(crate::fabric::Lid::from_raw(9)),
            Some(PortRef::new(n(1), 1)),
            "h1, second LID"
        );
    }

    #[test]
    fn what_is_written_reads_back_as_the_same_lids() {
        let mut b = simulated();
        b.assign_lids_switches_first(1).unwrap();
        let text = write(&b);
        let g = Guid2Lid::read(&text).unwrap();
        assert_eq!(g.len(), 6, "{text}");
        // The two switches first, then the CA ports in aligned pairs.
        assert_eq!(g.get(0x20_0000), Some(LidRange { base: 1, lmc: 0 }));
        assert_eq!(g.get(0x20_0001), Some(LidRange { base: 2, lmc: 0 }));
        let ca_bases: Vec<u16> = [0x10_0001, 0x10_0002, 0x10_0004, 0x10_0006]
            .iter()
            .map(|&guid| g.get(guid).map(|r| r.base).unwrap_or(0))
            .collect();
        assert_eq!(ca_bases, [4, 6, 8, 10]);
        let mut again = simulated();
        g.apply(&mut again).unwrap();
        assert_eq!(write(&again), text);
    }

    #[test]
    fn a_missing_end_port_is_named() {
        let mut b = simulated();
        let cache: String = CACHE
            .lines()
            .filter(|l| !l.starts_with("0x0000000000100004"))
            .collect::<Vec<_>>()
            .join("\n");
        let e = Guid2Lid::read(&cache).unwrap().apply(&mut b).unwrap_err();
        assert_eq!(
            e,
            Guid2LidError::MissingPort {
                guid: 0x10_0004,
                port: "port 1 of CA 0x0000000000100003 (h1)".into()
            }
        );
        assert!(
            e.to_string()
                .starts_with("guid2lid has no LID for port GUID 0x0000000000100004"),
            "{e}"
        );
    }

    #[test]
    fn bad_lines_are_named() {
        let e = Guid2Lid::read("0x1 0x0002 0x0003\n\n0x2 0x0004\n").unwrap_err();
        assert_eq!(
            e,
            Guid2LidError::Line {
                line: 3,
                message: "expected `0xPORT_GUID 0xBASE_LID 0xTOP_LID`, found 2 field(s)".into()
            }
        );
        let e = Guid2Lid::read("0x1 0x0002 0x0004\n").unwrap_err();
        assert!(e.to_string().contains("not a range of 2^LMC LIDs"), "{e}");
        let e = Guid2Lid::read("0x1 0x0004 0x0002\n").unwrap_err();
        assert!(e.to_string().contains("not a range"), "{e}");
        let e = Guid2Lid::read("0xzz 0x0004 0x0004\n").unwrap_err();
        assert!(
            e.to_string().contains("bad port GUID 'zz'")
                || e.to_string().contains("bad port GUID '0xzz'"),
            "{e}"
        );
        let e = Guid2Lid::read("0x1 0x0004 0x0004\n0x1 0x0006 0x0006\n").unwrap_err();
        assert!(
            e.to_string().starts_with(
                "guid2lid line 2: port GUID 0x0000000000000001 is listed again (first on line 1)"
            ),
            "{e}"
        );
        assert!(
            Guid2Lid::read("0x1 0x0004 0x0004\n\n0x1 0x0004 0x0004\n").is_ok(),
            "identical repeats are harmless"
        );
    }
}
