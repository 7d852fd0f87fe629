//! OpenSM's `opensm-subnet.lst`: one line per direction of every cable,
//!
//! ```text
//! { CA-SM Ports:01 SystemGUID:.. NodeGUID:0000000000100000 PortGUID:0000000000100001 VenID:.. DevID:.. Rev:.. {h0} LID:0001 PN:01 } { SW Ports:07 ... {sw0} LID:0002 PN:01 } PHY=4x LOG=ACT SPD=2.5
//! ```
//!
//! Each side names its node (type, port count, GUIDs, description), the
//! base LID of the port (a switch's own LID for switch ports) and the port
//! number. The LMC is not in the file; callers pass it. ibdiagnet writes
//! the same format as `ibdiagnet2.lst` (with the description, in braces,
//! sometimes left out), so this reads that too.

use std::collections::HashMap;

use crate::fabric::{FabricBuilder, Lid, NodeId, NodeKind, PortRef};

use super::DumpError;

struct Side {
    kind: NodeKind,
    ports: u8,
    node_guid: u64,
    port_guid: u64,
    desc: String,
    lid: u16,
    port: u8,
}

fn field<'a>(block: &'a str, key: &str) -> Option<&'a str> {
    let start = block.find(key)? + key.len();
    block[start..].split_whitespace().next()
}

fn side(block: &str) -> Option<Side> {
    let kind = if block.trim_start().starts_with("SW") {
        NodeKind::Switch
    } else {
        NodeKind::Ca
    };
    // ibdiagnet's copy of the format may leave the `{description}` out.
    let (desc, tail) = match (block.find('{'), block.rfind("} LID:")) {
        (Some(a), Some(z)) if a < z => (block[a + 1..z].to_string(), &block[z..]),
        _ => (String::new(), block),
    };
    Some(Side {
        kind,
        ports: u8::from_str_radix(field(block, "Ports:")?, 16).ok()?,
        node_guid: u64::from_str_radix(field(block, "NodeGUID:")?, 16).ok()?,
        port_guid: u64::from_str_radix(field(block, "PortGUID:")?, 16).ok()?,
        desc,
        lid: u16::from_str_radix(field(tail, "LID:")?, 16).ok()?,
        port: u8::from_str_radix(field(tail, "PN:")?, 16).ok()?,
    })
}

/// The two `{ ... }` blocks of a line (the description inside may itself
/// contain braces, so split on the block boundary " } { ").
fn blocks(line: &str) -> Option<(&str, &str)> {
    let line = line.trim().strip_prefix('{')?;
    let mid = line.find(" } { ")?;
    let first = &line[..mid];
    let rest = &line[mid + 5..];
    let end = rest.rfind(" }")?;
    Some((first, &rest[..end]))
}

/// Reads the fabric with the LIDs OpenSM assigned; CA ports get `lmc`.
pub fn read(text: &str, lmc: u8) -> Result<FabricBuilder, DumpError> {
    let mut b = FabricBuilder::new();
    let mut ids: HashMap<u64, NodeId> = HashMap::new();
    let mut cables = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = || {
            DumpError::new(
                "opensm-subnet.lst",
                i + 1,
                "expected `{ TYPE Ports:.. NodeGUID:.. ... LID:.. PN:.. } { ... }`",
            )
        };
        let (x, y) = blocks(line).ok_or_else(err)?;
        let (x, y) = (side(x).ok_or_else(err)?, side(y).ok_or_else(err)?);
        let mut here = [PortRef::new(NodeId::default(), 0); 2];
        for (k, s) in [&x, &y].into_iter().enumerate() {
            let id = *ids
                .entry(s.node_guid)
                .or_insert_with(|| b.add_node(s.kind, s.node_guid, s.desc.clone(), s.ports));
            let at = PortRef::new(id, s.port);
            let guid_port = if s.kind == NodeKind::Switch {
                PortRef::new(id, 0)
            } else {
                at
            };
            let lmc_here = if s.kind == NodeKind::Switch { 0 } else { lmc };
            b.set_lid(guid_port, Lid::from_raw(s.lid), lmc_here)
                .map_err(|e| DumpError::new("opensm-subnet.lst", i + 1, e.to_string()))?;
            b.port_mut(guid_port)
                .map_err(|e| DumpError::new("opensm-subnet.lst", i + 1, e.to_string()))?
                .guid = s.port_guid;
            here[k] = at;
        }
        cables.push((i + 1, here[0], here[1]));
    }
    for (line, a, z) in cables {
        b.connect(a, z)
            .map_err(|e| DumpError::new("opensm-subnet.lst", line, e.to_string()))?;
    }
    Ok(b)
}

/// Writes `fabric` in the same format (both directions of every cable), so
/// `osmroute check` reads offline routings like OpenSM's.
pub fn write(fabric: &crate::Fabric) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let side = |out: &mut String, at: PortRef| {
        let node = fabric.node(at.node);
        let (kind, lid_port) = if node.is_switch() {
            ("SW", PortRef::new(at.node, 0))
        } else {
            ("CA", at)
        };
        let port = fabric.port(lid_port);
        let _ = write!(
            out,
            "{{ {kind} Ports:{:02X} SystemGUID:{:016x} NodeGUID:{:016x} PortGUID:{:016x} VenID:000000 DevID:0000 Rev:00000000 {{{}}} LID:{:04X} PN:{:02X} }}",
            node.port_slots() - 1,
            node.guid,
            node.guid,
            port.map_or(0, |p| p.guid),
            node.desc,
            port.map_or(0, |p| p.lid.raw()),
            at.port.raw()
        );
    };
    for id in fabric.node_ids() {
        for (port, remote) in fabric.node(id).links() {
            side(&mut out, PortRef::new(id, port));
            out.push(' ');
            side(&mut out, remote);
            out.push_str(" PHY=4x LOG=ACT SPD=2.5\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: usize) -> crate::fabric::NodeId {
        crate::fabric::NodeId::new(i)
    }

    const LINE: &str = "{ CA-SM Ports:01 SystemGUID:0000000000100000 NodeGUID:0000000000100000 PortGUID:0000000000100001 VenID:000000 DevID:0000 Rev:000000A1 {h0 {x}} LID:0001 PN:01 } { SW Ports:07 SystemGUID:0000000000200000 NodeGUID:0000000000200000 PortGUID:0000000000200000 VenID:00000000 DevID:0000 Rev:000000A1 {sw0} LID:0002 PN:03 } PHY=4x LOG=ACT SPD=2.5";

    #[test]
    fn reads_opensm_lines() {
        let b = read(LINE, 0).unwrap();
        assert_eq!(b.node_count(), 2);
        assert_eq!(b.node(n(0)).desc, "h0 {x}");
        assert_eq!(b.node(n(0)).port(1).unwrap().lid, 1);
        assert_eq!(b.node(n(1)).port(0).unwrap().lid, 2);
        assert_eq!(
            b.node(n(0)).port(1).unwrap().remote,
            Some(PortRef::new(n(1), 3))
        );
        assert_eq!(b.node(n(1)).port_slots(), 8);
    }

    #[test]
    fn write_read_round_trip() {
        let mut b = read(LINE, 0).unwrap();
        b.set_lmc(0);
        let f = b.build().unwrap();
        let again = read(&write(&f), 0).unwrap().build().unwrap();
        assert_eq!(f.nodes(), again.nodes());
    }

    #[test]
    fn bad_line_is_named() {
        let e = read("garbage\n", 0).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.to_string().starts_with("opensm-subnet.lst:1:"));
    }
}
