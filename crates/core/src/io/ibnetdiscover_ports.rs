//! The one-line-per-cable form `ibnetdiscover -p` prints, as in public
//! dumps of real clusters (hwloc's netloc test data, for one):
//!
//! ```text
//! CA   139  1 0x0002c903004e26b1 4x QDR - SW   142 36 0x0008f10500108c9e ( 'manumanu HCA-1' - 'Voltaire 4036 # 4036-8C9E' )
//! SW   142  1 0x0008f10500108c9e 4x QDR - SW    51 17 0x0008f1050010852c ( 'Voltaire 4036 # 4036-8C9E' - 'Voltaire 4036 # 4036-852C' )
//! ```
//!
//! Each line is a cable: (type, LID, port, GUID) of both ends, then both
//! node descriptions. The GUID is the switch's node GUID or the CA port's
//! GUID; CAs are taken as single-port nodes named by it. Lines of other
//! forms (unconnected ports, `DR path` traces of `ibnetdiscover -v`) are
//! skipped. A switch has as many ports as the highest one listed.

use std::collections::HashMap;

use super::ibnetdiscover::IbnetdiscoverError;
use crate::fabric::{FabricBuilder, Lid, NodeKind, PortRef};

/// Whether `text` is in this form: some line reads as a cable.
pub fn looks_like(text: &str) -> bool {
    text.lines().any(|l| cable(l).is_some())
}

/// One end of a cable.
struct End<'a> {
    switch: bool,
    lid: u16,
    port: u8,
    guid: u64,
    desc: &'a str,
}

fn cable(line: &str) -> Option<(End<'_>, End<'_>)> {
    let (ends, descs) = line.trim().split_once(" ( ")?;
    let (left, right) = ends.split_once(" - ")?;
    let descs = descs.trim().strip_suffix(')')?.trim();
    let (da, db) = descs.split_once("' - '")?;
    let parse = |text: &str| -> Option<(bool, u16, u8, u64)> {
        let w: Vec<&str> = text.split_whitespace().collect();
        let switch = match *w.first()? {
            "SW" => true,
            "CA" => false,
            _ => return None,
        };
        let guid = u64::from_str_radix(w.get(3)?.strip_prefix("0x")?, 16).ok()?;
        Some((
            switch,
            w.get(1)?.parse().ok()?,
            w.get(2)?.parse().ok()?,
            guid,
        ))
    };
    let (sa, la, pa, ga) = parse(left)?;
    let (sb, lb, pb, gb) = parse(right)?;
    let da = da.strip_prefix('\'')?;
    let db = db.strip_suffix('\'')?;
    Some((
        End {
            switch: sa,
            lid: la,
            port: pa,
            guid: ga,
            desc: da,
        },
        End {
            switch: sb,
            lid: lb,
            port: pb,
            guid: gb,
            desc: db,
        },
    ))
}

/// Reads the cables into nodes (GUIDs, descriptions, the LIDs the SM had
/// given), every cable once.
pub fn read(text: &str) -> Result<FabricBuilder, IbnetdiscoverError> {
    // Per GUID: switch?, description, highest port, LID; in first-seen order.
    let mut nodes: Vec<(u64, bool, String, u8, u16)> = Vec::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    // (line, (GUID, port) at either end).
    type GuidPort = (u64, u8);
    let mut cables: Vec<(usize, GuidPort, GuidPort)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some((a, b)) = cable(line) else { continue };
        for e in [&a, &b] {
            let k = *index.entry(e.guid).or_insert_with(|| {
                nodes.push((e.guid, e.switch, e.desc.to_string(), 0, e.lid));
                nodes.len() - 1
            });
            if nodes[k].1 != e.switch {
                return Err(IbnetdiscoverError {
                    line: i + 1,
                    message: format!("GUID {:#x} is listed both as a switch and as a CA", e.guid),
                });
            }
            nodes[k].3 = nodes[k].3.max(e.port);
        }
        cables.push((i + 1, (a.guid, a.port), (b.guid, b.port)));
    }
    let mut b = FabricBuilder::new();
    let mut ids = HashMap::new();
    for (guid, switch, desc, ports, lid) in &nodes {
        let (kind, node_guid) = if *switch {
            (NodeKind::Switch, *guid)
        } else {
            // The port GUID; the node GUID is not printed: one below it,
            // as HCAs number their ports from the node GUID.
            (NodeKind::Ca, guid.saturating_sub(1))
        };
        let ports = if *switch { *ports } else { 1 };
        let id = b.add_node(kind, node_guid, desc.clone(), ports.max(1));
        let at = PortRef::new(id, if *switch { 0 } else { 1 });
        let err = |e: crate::fabric::FabricError| IbnetdiscoverError {
            line: 0,
            message: e.to_string(),
        };
        if !*switch {
            b.port_mut(at).map_err(err)?.guid = *guid;
        }
        if *lid > 0 {
            b.set_lid(at, Lid::from_raw(*lid), 0).map_err(err)?;
        }
        ids.insert(*guid, (id, *switch));
    }
    let mut seen = std::collections::HashSet::new();
    for (line, (ga, pa), (gb, pb)) in cables {
        let end = |g: u64, p: u8| {
            let (id, switch) = ids[&g];
            PortRef::new(id, if switch { p } else { 1 })
        };
        let (x, y) = (end(ga, pa), end(gb, pb));
        if !seen.insert((x.min(y), x.max(y))) {
            continue; // listed from both ends
        }
        b.connect(x, y).map_err(|e| IbnetdiscoverError {
            line,
            message: e.to_string(),
        })?;
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
DR path slid 0; dlid 0; 0 -> new Channel Adapter {003048ffffcb285c} portnum 1 lid 0-0 \"\"
CA   139  1 0x0002c903004e26b1 4x QDR - SW   142 36 0x0008f10500108c9e ( 'manumanu HCA-1' - 'Voltaire 4036 # 4036-8C9E' )
SW   142 36 0x0008f10500108c9e 4x QDR - CA   139  1 0x0002c903004e26b1 ( 'Voltaire 4036 # 4036-8C9E' - 'manumanu HCA-1' )
SW   142  1 0x0008f10500108c9e 4x QDR - SW    51 17 0x0008f1050010852c ( 'Voltaire 4036 # 4036-8C9E' - 'Voltaire 4036 # 4036-852C' )
SW    51  3 0x0008f1050010852c 4x QDR - CA    44  1 0x78e7d10300215995 ( 'Voltaire 4036 # 4036-852C' - 'mirage006 HCA-1' )
";

    #[test]
    fn cables_listed_from_either_end_make_one_fabric() {
        assert!(looks_like(TEXT));
        let b = read(TEXT).unwrap();
        assert_eq!(b.node_count(), 4);
        let f = {
            let mut b = b;
            b.assign_lids_sequential(0).unwrap();
            b.build().unwrap()
        };
        assert_eq!((f.switches().len(), f.cas().count()), (2, 2));
        let g = f.graph();
        assert!(g
            .ids()
            .all(|s| g.hosts(s) == 1 && g.neighbours(s).len() == 1));
        assert!(!looks_like("Switch 8 \"S-0000000000200001\""));
    }
}
