//! Reading a routing back from the simulated switches, as on real
//! hardware: LFTs with `ibroute`, SL2VL tables with `smpquery`, and the
//! independent credit-loop check with `ibdmchk`.

use std::collections::HashMap;
use std::process::Command;

use osmroute_core::fabric::{NodeKind, PortRef};
use osmroute_core::io::netfile;
use osmroute_core::routing::{PathSl, Routing};
use osmroute_core::Fabric;

use super::Sim;

/// (node GUID, LID) of every switch, as `ibswitches` reports them.
pub fn switches(sim: &Sim) -> Vec<(u64, u16)> {
    sim.tool("ibswitches", &[])
        .lines()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let guid = u64::from_str_radix(words.get(2)?.trim_start_matches("0x"), 16).ok()?;
            let lid = words.iter().position(|w| *w == "lid").and_then(|i| words.get(i + 1))?.parse().ok()?;
            Some((guid, lid))
        })
        .collect()
}

/// The fabric of `net` with the LIDs OpenSM assigned (CA ports with `lmc`),
/// and the LFTs read back from every simulated switch with `ibroute`.
pub fn read_back(sim: &Sim, net: &str, lmc: u8) -> (Fabric, Routing) {
    let mut b = netfile::read(net).expect("our own net file parses");
    let mut port_by_guid = HashMap::new();
    for (id, n) in b.nodes().iter().enumerate() {
        for (num, p) in n.ports.iter().enumerate() {
            if let Some(p) = p {
                let end_port = if n.kind == NodeKind::Switch { num == 0 } else { num > 0 };
                if end_port {
                    port_by_guid.insert(p.guid, PortRef::new(id, num as u8));
                }
            }
        }
    }
    let mut tables: HashMap<u64, Vec<(u16, u8)>> = HashMap::new();
    for (guid, lid) in switches(sim) {
        let mut entries = Vec::new();
        for line in sim.tool("ibroute", &[&lid.to_string()]).lines() {
            // 0x0001 003 : (Channel Adapter portguid 0x0000000000100001: 'h0')
            let words: Vec<&str> = line.split_whitespace().collect();
            let (Some(l), Some(port)) = (words.first(), words.get(1)) else { continue };
            let (Some(l), Ok(port)) = (l.strip_prefix("0x"), port.parse::<u8>()) else { continue };
            let Ok(l) = u16::from_str_radix(l, 16) else { continue };
            entries.push((l, port));
            let owner = words.iter().position(|w| *w == "portguid").and_then(|i| words.get(i + 1));
            if let Some(g) = owner.and_then(|g| u64::from_str_radix(g.trim_end_matches(':').trim_start_matches("0x"), 16).ok()) {
                if let Some(&at) = port_by_guid.get(&g) {
                    // ibroute lists every LID of a port; keep the base.
                    let port_lmc = if b.node(at.node).is_switch() { 0 } else { lmc };
                    if l % (1 << port_lmc) == 0 {
                        b.set_lid(at, l, port_lmc).expect("port exists");
                    }
                }
            }
        }
        tables.insert(guid, entries);
    }
    let fabric = b.build().expect("read-back LIDs are consistent");
    let mut lfts = Routing::empty_lfts(&fabric);
    for (si, &node) in fabric.switches().iter().enumerate() {
        let entries = tables.get(&fabric.node(node).guid).expect("ibswitches lists every switch");
        for &(lid, port) in entries {
            if let Some(slot) = lfts[si].get_mut(lid as usize) {
                *slot = port;
            }
        }
    }
    (fabric, Routing { engine: "read back".into(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) })
}

/// SL2VL rows of `smpquery sl2vl LID OUT`: (in-port, VL per SL).
pub fn sl2vl_rows(sim: &Sim, lid: u16, out: u8) -> Vec<(u8, Vec<u8>)> {
    sim.tool("smpquery", &["sl2vl", &lid.to_string(), &out.to_string()])
        .lines()
        .filter_map(|l| {
            // ports: in  6, out  5: | 1| 1| ... |
            let rest = l.strip_prefix("ports: in")?;
            let (inp, rest) = rest.split_once(',')?;
            let (_, vls) = rest.split_once(':')?;
            let vls: Vec<u8> = vls.split('|').filter_map(|v| v.trim().parse().ok()).collect();
            Some((inp.trim().parse().ok()?, vls))
        })
        .collect()
}

pub fn ibdmchk(dir: &std::path::Path, extra: &[&str]) -> String {
    let out = Command::new("ibdmchk")
        .current_dir(dir)
        .args(["-s", "opensm-subnet.lst", "-f", "opensm.fdbs", "-m", "opensm.mcfdbs"])
        .args(extra)
        .output()
        .expect("run ibdmchk (install ibutils)");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

