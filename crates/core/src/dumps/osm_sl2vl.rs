//! OpenSM's own `opensm-sl2vl.dump`: the SL-to-VL tables OpenSM holds for
//! every port, written with `-D 0x43` (log_flags including ROUTING) when
//! `qos TRUE` or the routing engine programs SL2VL. Reading it lets `osmroute
//! check` judge OpenSM's routing (and the VLs OpenSM really programmed)
//! without our plugin's `osmroute-sl2vl.txt`.
//!
//! One block per port with a LID, switches by their port-0 GUID, CA ports
//! by port GUID:
//!
//! ```text
//! Switch 0x0000000000200000, base LID 4, "s0"
//! #in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
//! #--------------------------------------------------------
//! 0   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7
//! ...
//! #--------------------------------------------------------
//!
//! Channel Adapter 0x0000000000100001, base LID 2, "h0"
//! ...
//! 0   0   : 0  0  0  0  0  0  0  0  0  0  0  0  0  0  0  0
//! ```
//!
//! A switch block has a row per (in-port, out-port) for every cabled
//! out-port and every in-port 0..=ports; a CA or router block has one row,
//! the port's own table.
//!
//! Only what routing analysis can use is kept: rows whose in-port is the
//! switch itself (0) or cabled, because no packet arrives on an uncabled
//! port, and no CA tables, because a CA's link is never part of a credit
//! loop. OpenSM's default QoS tables on the unused rows would otherwise
//! count as VLs the routing needs. That is also what `ibdmchk::write_sl2vl`
//! writes, so for one routing both files read back to the same tables.

use std::collections::HashMap;

use crate::fabric::{Fabric, PortNum, SwitchId};
use crate::routing::{Sl2Vl, SlVlTable, ALL_VL0};

use super::{DumpError, OSM_SL2VL_FILE};

/// Whose block the rows belong to.
enum Owner {
    Switch(SwitchId),
    /// A CA or router port; its table is not kept.
    Ca,
}

/// Reads the dump into tables for `fabric`'s switches (pairs not listed keep
/// VL 0 for every SL), like `ibdmchk::read_sl2vl`. CA blocks are checked
/// for form and otherwise skipped.
pub fn read(fabric: &Fabric, text: &str) -> Result<Sl2Vl, DumpError> {
    let by_guid: HashMap<u64, SwitchId> = fabric
        .switch_ids()
        .flat_map(|i| {
            let node = fabric.switch_node(i);
            // Blocks name the port-0 GUID, which is the node GUID on every
            // switch we have seen; accept either.
            let port0 = node.port(0).map(|p| p.guid);
            std::iter::once((node.guid, i)).chain(port0.map(|g| (g, i)))
        })
        .collect();
    let mut tables = Sl2Vl::new(fabric, ALL_VL0);
    let mut owner: Option<Owner> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |message: String| DumpError::new(OSM_SL2VL_FILE, line, message);
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some((kind, guid)) = block_header(trimmed) {
            owner = Some(if kind == "Switch" {
                let &si = by_guid.get(&guid).ok_or_else(|| {
                    err(format!(
                        "unknown switch {guid:#018x}; is the dump from the same OpenSM run as {}?",
                        super::SUBNET_FILE
                    ))
                })?;
                Owner::Switch(si)
            } else {
                Owner::Ca
            });
            continue;
        }
        let (inp, out, table) = row(trimmed).ok_or_else(|| {
            err("expected a block header `Switch 0xGUID, base LID N, \"desc\"` or a row `IN OUT : VL0 ... VL15` (16 VLs 0..=15)".into())
        })?;
        match owner {
            None => {
                return Err(err(
                    "table row before any `Switch`/`Channel Adapter` header".into(),
                ))
            }
            Some(Owner::Switch(si)) => {
                let ports = tables.switch_ports(si);
                if usize::from(inp.max(out)) >= ports {
                    let node = fabric.switch_node(si);
                    return Err(err(format!(
                        "{} has ports 0..={} but the row is for in-port {inp}, out-port {out}; \
                         is the dump from the same fabric as {}?",
                        crate::fabric::describe(node),
                        ports - 1,
                        super::SUBNET_FILE
                    )));
                }
                let node = fabric.switch_node(si);
                let cabled = |p: u8| p == 0 || node.port(p).is_some_and(|p| p.remote.is_some());
                if !cabled(inp) || !cabled(out) {
                    continue;
                }
                tables.set_switch(si, PortNum::new(inp), PortNum::new(out), table);
            }
            Some(Owner::Ca) => {}
        }
    }
    Ok(tables)
}

/// `Switch 0x0000000000200000, base LID 4, "s0"` -> ("Switch", GUID); also
/// `Channel Adapter ...` and `Router ...` (OpenSM's node type names).
fn block_header(line: &str) -> Option<(&str, u64)> {
    let kind = ["Switch", "Channel Adapter", "Router"]
        .into_iter()
        .find(|k| line.starts_with(k))?;
    let guid = line[kind.len()..].trim_start().split(',').next()?.trim();
    let guid = u64::from_str_radix(guid.strip_prefix("0x")?, 16).ok()?;
    Some((kind, guid))
}

/// `0   1   : 0  1  2 ... 7` -> (in-port, out-port, table).
fn row(line: &str) -> Option<(u8, u8, SlVlTable)> {
    let (ports, vls) = line.split_once(':')?;
    let mut ports = ports.split_whitespace().map(|w| w.parse::<u8>().ok());
    let (inp, out) = (ports.next()??, ports.next()??);
    if ports.next().is_some() {
        return None;
    }
    let mut table = ALL_VL0;
    let mut vls = vls.split_whitespace();
    for slot in table.iter_mut() {
        *slot = vls.next()?.parse().ok().filter(|&vl: &u8| vl < 16)?;
    }
    vls.next().is_none().then_some((inp, out, table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricBuilder, NodeKind, PortRef};

    /// From OpenSM 3.3.23 under ibsim with `qos TRUE` (its default QoS
    /// tables, VL = SL mod 8), shortened to a few rows; the rows 1->5 and
    /// 2->1 of s0 are edited to show tables that differ.
    const DUMP: &str = "Switch 0x0000000000200000, base LID 4, \"s0\"
#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
#--------------------------------------------------------
0   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7 
5   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7 
1   5   : 1  1  1  1  1  1  1  1  1  1  1  1  1  1  1  1 
2   1   : 3  3  3  3  3  3  3  3  3  3  3  3  3  3  3  3 
#--------------------------------------------------------

Channel Adapter 0x0000000000100001, base LID 2, \"h0\"
#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
#--------------------------------------------------------
0   0   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7 
#--------------------------------------------------------

Channel Adapter 0x0000000000100002, base LID 6, \"h0\"
#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15
#--------------------------------------------------------
0   0   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  0 
#--------------------------------------------------------

";

    fn fabric() -> Fabric {
        let mut b = FabricBuilder::new();
        let h0 = b.add_node(NodeKind::Ca, 0x10_0000, "h0", 2);
        let s0 = b.add_node(NodeKind::Switch, 0x20_0000, "s0", 8);
        let s1 = b.add_node(NodeKind::Switch, 0x20_0001, "s1", 8);
        b.connect(PortRef::new(h0, 1), PortRef::new(s0, 1)).unwrap();
        b.connect(PortRef::new(h0, 2), PortRef::new(s1, 1)).unwrap();
        b.connect(PortRef::new(s0, 5), PortRef::new(s1, 5)).unwrap();
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn reads_switch_tables_of_cabled_ports() {
        let f = fabric();
        let t = read(&f, DUMP).unwrap();
        let qos = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7];
        let (s0, s1, p) = (SwitchId::new(0), SwitchId::new(1), PortNum::new);
        assert_eq!(t.switch_table(s0, p(0), p(1)), &qos);
        assert_eq!(t.switch_table(s0, p(5), p(1)), &qos);
        assert_eq!(t.switch_table(s0, p(1), p(5)), &[1; 16]);
        assert_eq!(
            t.switch_table(s0, p(2), p(1)),
            &ALL_VL0,
            "in-port 2 is not cabled: skipped"
        );
        assert_eq!(
            t.switch_table(s1, p(5), p(1)),
            &ALL_VL0,
            "rows not listed stay on VL 0"
        );
        assert_eq!(t.vls_used(), 8);
        assert_eq!(t.ca_table(&[9; 16]), [9; 16], "CA tables are not kept");
    }

    #[test]
    fn errors_name_the_line() {
        let f = fabric();
        let e = read(&f, "Switch 0x0000000000300000, base LID 4, \"x\"\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            e.message.starts_with("unknown switch 0x0000000000300000"),
            "{e}"
        );
        let e = read(
            &f,
            "Switch 0x0000000000200000, base LID 4, \"s0\"\n0 1 : 0 1 2\n",
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("opensm-sl2vl.dump:2: expected a block header"),
            "{e}"
        );
        let e = read(
            &f,
            "0   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7\n",
        )
        .unwrap_err();
        assert!(e.message.contains("before any"), "{e}");
        let e = read(&f, "Switch 0x0000000000200000, base LID 4, \"s0\"\n9 1 : 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n").unwrap_err();
        assert!(e.message.contains("has ports 0..=8"), "{e}");
    }

    #[test]
    fn hundreds_of_distinct_tables_are_read() {
        let mut b = FabricBuilder::new();
        let big = b.add_node(NodeKind::Switch, 0x20_0000, "big", 36);
        for p in (1..36).step_by(2) {
            b.connect(PortRef::new(big, p), PortRef::new(big, p + 1))
                .unwrap();
        }
        let f = b.build().unwrap();
        let mut text = String::from("Switch 0x0000000000200000, base LID 1, \"big\"\n");
        let vls_of =
            |n: u32| -> Vec<u8> { (0..16).map(|sl| ((n >> (sl % 9)) & 1) as u8).collect() };
        for n in 0..300u32 {
            let (inp, out) = (n / 35, n % 35 + 1);
            let vls: Vec<String> = vls_of(n).iter().map(u8::to_string).collect();
            text.push_str(&format!("{inp} {out} : {}\n", vls.join(" ")));
        }
        let t = read(&f, &text).unwrap();
        assert!(t.distinct_tables() > 256, "{}", t.distinct_tables());
        for n in [0u32, 137, 299] {
            let (inp, out) = (
                PortNum::new((n / 35) as u8),
                PortNum::new((n % 35 + 1) as u8),
            );
            assert_eq!(
                t.switch_table(SwitchId::new(0), inp, out)[..],
                vls_of(n)[..],
                "row {n}"
            );
        }
    }
}
