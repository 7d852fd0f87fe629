//! The path-SL and SL2VL files in the formats of ibdmchk's `-c` and `-d`
//! options, so an independent tool can check our routing for credit loops.
//!
//! - path SL: `0xSRC_NODE_GUID DLID SL`, one line per source CA node and
//!   destination CA LID. ibdmchk looks sources up by *node* GUID.
//! - SL2VL: `0xSW_GUID INPORT OUTPORT 0xAB 0xCD ...`, eight space-separated
//!   bytes, each carrying the VLs of two SLs (SL 2i in the high nibble).
//!   ibdmchk silently misreads comma-separated bytes as a single VL.

use std::io::{self, Write};

use crate::fabric::{Fabric, Lid, NodeId, PortNum};
use crate::routing::{pack_sl2vl, Routing};

/// Number of lines `write_path_sl` would produce.
pub fn path_sl_lines(fabric: &Fabric) -> u64 {
    let ca_nodes = fabric.cas().count() as u64;
    let ca_lids = ca_lids(fabric).count() as u64;
    ca_nodes * ca_lids
}

fn ca_lids(fabric: &Fabric) -> impl Iterator<Item = (Lid, NodeId)> + '_ {
    fabric.ca_lids().map(|(lid, o)| (lid, o.node))
}

pub fn write_path_sl(fabric: &Fabric, routing: &Routing, out: &mut impl Write) -> io::Result<()> {
    let dlids: Vec<(Lid, NodeId)> = ca_lids(fabric).collect();
    for src in fabric.cas() {
        let node = fabric.node(src);
        // The SL of a node's paths is asked with the LID of its first port.
        let Some(slid) = node
            .ports
            .iter()
            .flatten()
            .map(|p| p.lid)
            .find(|l| !l.is_none())
        else {
            continue;
        };
        for &(dlid, dst) in &dlids {
            if dst == src {
                continue;
            }
            writeln!(
                out,
                "{:#018x} {} {}",
                node.guid,
                dlid,
                routing.path_sl.sl(slid, dlid)
            )?;
        }
    }
    Ok(())
}

/// Writes the table of every (in-port, out-port) pair of every switch where
/// both ports are cabled (in-port 0, the switch itself, included).
pub fn write_sl2vl(fabric: &Fabric, routing: &Routing, out: &mut impl Write) -> io::Result<()> {
    let Some(sl2vl) = &routing.sl2vl else {
        return Ok(());
    };
    for si in fabric.switch_ids() {
        let node = fabric.switch_node(si);
        let cabled: Vec<PortNum> = node
            .links()
            .map(|(p, _)| p)
            .filter(|p| !p.is_management())
            .collect();
        for inp in std::iter::once(PortNum::MANAGEMENT).chain(cabled.iter().copied()) {
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

/// Reads an SL2VL file in ibdmchk's `-d` format into tables for `fabric`'s
/// switches (pairs not listed keep VL 0 for every SL).
pub fn read_sl2vl(fabric: &Fabric, text: &str) -> Result<crate::routing::Sl2Vl, super::DumpError> {
    use crate::routing::{unpack_sl2vl, Sl2Vl, ALL_VL0};
    let mut tables = Sl2Vl::new(fabric, ALL_VL0);
    for (i, line) in text.lines().enumerate() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        let err = || {
            super::DumpError::new(
                super::SL2VL_FILE,
                i + 1,
                "expected `0xSWITCH_GUID IN OUT` and eight bytes `0xAB`",
            )
        };
        if w.len() != 11 {
            return Err(err());
        }
        let guid = u64::from_str_radix(w[0].trim_start_matches("0x"), 16).map_err(|_| err())?;
        let (inp, out): (u8, u8) = (
            w[1].parse().map_err(|_| err())?,
            w[2].parse().map_err(|_| err())?,
        );
        let mut raw = [0u8; 8];
        for (k, b) in raw.iter_mut().enumerate() {
            *b = u8::from_str_radix(w[3 + k].trim_start_matches("0x"), 16).map_err(|_| err())?;
        }
        let si = fabric.switch_with_guid(guid).ok_or_else(|| {
            super::DumpError::new(
                super::SL2VL_FILE,
                i + 1,
                format!("unknown switch {guid:#018x}"),
            )
        })?;
        tables.set_switch(si, PortNum::new(inp), PortNum::new(out), unpack_sl2vl(&raw));
    }
    Ok(tables)
}

/// Reads a path-SL file in ibdmchk's `-c` format (sources by node GUID,
/// asked with the LID of the node's first port).
pub fn read_path_sl(
    fabric: &Fabric,
    text: &str,
) -> Result<crate::routing::PathSl, super::DumpError> {
    let slid_of: std::collections::HashMap<u64, Lid> = fabric
        .nodes()
        .iter()
        .filter_map(|n| {
            Some((
                n.guid,
                n.ports
                    .iter()
                    .flatten()
                    .map(|p| p.lid)
                    .find(|l| !l.is_none())?,
            ))
        })
        .collect();
    let mut sl = std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        let err = || {
            super::DumpError::new(
                super::PATH_SL_FILE,
                i + 1,
                "expected `0xSRC_NODE_GUID DLID SL`",
            )
        };
        if w.len() != 3 {
            return Err(err());
        }
        let guid = u64::from_str_radix(w[0].trim_start_matches("0x"), 16).map_err(|_| err())?;
        let (dlid, s): (u16, u8) = (
            w[1].parse().map_err(|_| err())?,
            w[2].parse().map_err(|_| err())?,
        );
        if s as usize >= crate::routing::NUM_SLS {
            return Err(super::DumpError::new(
                super::PATH_SL_FILE,
                i + 1,
                format!("SL {s} is out of range: SLs are 0 to 15"),
            ));
        }
        let dlid = Lid::from_raw(dlid);
        let &slid = slid_of.get(&guid).ok_or_else(|| {
            super::DumpError::new(
                super::PATH_SL_FILE,
                i + 1,
                format!("unknown node {guid:#018x}"),
            )
        })?;
        sl.insert((slid, dlid), s);
    }
    let mut used: Vec<u8> = sl.values().copied().collect();
    used.sort_unstable();
    used.dedup();
    Ok(match used[..] {
        [] => crate::routing::PathSl::Uniform(0),
        [only] => crate::routing::PathSl::Uniform(only),
        _ => crate::routing::PathSl::Pairs { default: 0, sl },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::dragonfly::{dragonfly, Params};

    #[test]
    fn written_files_read_back_to_the_same_tables() {
        let mut b = dragonfly(&Params::new(3, 1, 1)).unwrap();
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let r = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        let mut text = Vec::new();
        write_sl2vl(&f, &r, &mut text).unwrap();
        let back = read_sl2vl(&f, &String::from_utf8(text).unwrap()).unwrap();
        let mine = r.sl2vl.as_ref().unwrap();
        for s in f.switch_ids() {
            for (inp, _) in f.switch_node(s).links() {
                for (out, _) in f.switch_node(s).links() {
                    if inp != out {
                        assert_eq!(
                            back.switch_table(s, inp, out),
                            mine.switch_table(s, inp, out)
                        );
                    }
                }
            }
        }
        let mut text = Vec::new();
        write_path_sl(&f, &r, &mut text).unwrap();
        assert_eq!(
            read_path_sl(&f, &String::from_utf8(text).unwrap()).unwrap(),
            r.path_sl
        );
        assert!(read_sl2vl(&f, "0x1 1 2 0x00\n")
            .unwrap_err()
            .to_string()
            .contains(":1:"));
        let ca = f.node(f.cas().next().unwrap()).guid;
        let bad_sl = read_path_sl(&f, &format!("{ca:#x} 1 16\n"))
            .unwrap_err()
            .to_string();
        assert!(bad_sl.contains("SL 16 is out of range"), "{bad_sl}");
    }
}
