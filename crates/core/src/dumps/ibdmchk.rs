//! The path-SL and SL2VL files in the formats of ibdmchk's `-c` and `-d`
//! options, so an independent tool can check our routing for credit loops.
//!
//! - path SL: `0xSRC_NODE_GUID DLID SL`, one line per source CA node and
//!   destination CA LID. ibdmchk looks sources up by *node* GUID.
//! - SL2VL: `0xSW_GUID INPORT OUTPORT 0xAB 0xCD ...`, eight space-separated
//!   bytes, each carrying the VLs of two SLs (SL 2i in the high nibble).
//!   ibdmchk silently misreads comma-separated bytes as a single VL.

use std::io::{self, Write};

use crate::fabric::{Fabric, NodeKind};
use crate::routing::{pack_sl2vl, Routing};

/// Number of lines `write_path_sl` would produce.
pub fn path_sl_lines(fabric: &Fabric) -> u64 {
    let ca_nodes = fabric.cas().count() as u64;
    let ca_lids = ca_lids(fabric).count() as u64;
    ca_nodes * ca_lids
}

fn ca_lids(fabric: &Fabric) -> impl Iterator<Item = (u16, usize)> + '_ {
    fabric.lids().filter(|(_, o)| fabric.node(o.node).kind == NodeKind::Ca).map(|(lid, o)| (lid, o.node))
}

pub fn write_path_sl(fabric: &Fabric, routing: &Routing, out: &mut impl Write) -> io::Result<()> {
    let dlids: Vec<(u16, usize)> = ca_lids(fabric).collect();
    for src in fabric.cas() {
        let node = fabric.node(src);
        // The SL of a node's paths is asked with the LID of its first port.
        let Some(slid) = node.ports.iter().flatten().map(|p| p.lid).find(|&l| l != 0) else { continue };
        for &(dlid, dst) in &dlids {
            if dst == src {
                continue;
            }
            writeln!(out, "{:#018x} {} {}", node.guid, dlid, routing.path_sl.sl(slid, dlid))?;
        }
    }
    Ok(())
}

/// Writes the table of every (in-port, out-port) pair of every switch where
/// both ports are cabled (in-port 0, the switch itself, included).
pub fn write_sl2vl(fabric: &Fabric, routing: &Routing, out: &mut impl Write) -> io::Result<()> {
    let Some(sl2vl) = &routing.sl2vl else { return Ok(()) };
    for (si, &n) in fabric.switches().iter().enumerate() {
        let node = fabric.node(n);
        let cabled: Vec<u8> = node.links().map(|(p, _)| p).filter(|&p| p != 0).collect();
        for inp in std::iter::once(0).chain(cabled.iter().copied()) {
            for &outp in &cabled {
                if outp == inp {
                    continue;
                }
                let raw = pack_sl2vl(sl2vl.switch_table(si, inp, outp));
                write!(out, "{:#018x} {} {}", node.guid, inp, outp)?;
                for b in raw {
                    write!(out, " 0x{b:02x}")?;
                }
                writeln!(out)?;
            }
        }
    }
    Ok(())
}
