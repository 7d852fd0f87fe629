//! Reading a routing back from the simulated switches, as on real
//! hardware: LFTs with `ibroute`, SL2VL tables with `smpquery`, and the
//! independent credit-loop check with `ibdmchk`.

use std::collections::{BTreeSet, HashMap};
use std::process::Command;

use osmroute_core::fabric::{Lid, NodeId, NodeKind, PortNum, PortRef};
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
            let lid = words
                .iter()
                .position(|w| *w == "lid")
                .and_then(|i| words.get(i + 1))?
                .parse()
                .ok()?;
            Some((guid, lid))
        })
        .collect()
}

/// The fabric of `net` with the LIDs OpenSM assigned (each port's LID range
/// as the switches route it, so LMC and `lmc_esp0` need not be given), and
/// the LFTs read back from every simulated switch with `ibroute`.
pub fn read_back(sim: &Sim, net: &str) -> (Fabric, Routing) {
    read_back_of(sim, netfile::read(net).expect("our own net file parses"))
}

/// `read_back` on the fabric `b` describes (e.g. a net file with the
/// cables a test unlinked taken out).
pub fn read_back_of(sim: &Sim, mut b: osmroute_core::FabricBuilder) -> (Fabric, Routing) {
    let mut port_by_guid = HashMap::new();
    for (id, n) in NodeId::range(b.node_count()).zip(b.nodes()) {
        for (num, p) in n.ports.iter().enumerate() {
            if let Some(p) = p {
                let end_port = if n.kind == NodeKind::Switch {
                    num == 0
                } else {
                    num > 0
                };
                if end_port {
                    port_by_guid.insert(p.guid, PortRef::new(id, num as u8));
                }
            }
        }
    }
    let mut tables: HashMap<u64, Vec<(u16, u8)>> = HashMap::new();
    let mut port_lids: HashMap<PortRef, BTreeSet<u16>> = HashMap::new();
    for (guid, lid) in switches(sim) {
        let mut entries = Vec::new();
        for line in sim.tool("ibroute", &[&lid.to_string()]).lines() {
            // 0x0001 003 : (Channel Adapter portguid 0x0000000000100001: 'h0')
            let words: Vec<&str> = line.split_whitespace().collect();
            let (Some(l), Some(port)) = (words.first(), words.get(1)) else {
                continue;
            };
            let (Some(l), Ok(port)) = (l.strip_prefix("0x"), port.parse::<u8>()) else {
                continue;
            };
            let Ok(l) = u16::from_str_radix(l, 16) else {
                continue;
            };
            entries.push((l, port));
            let owner = words
                .iter()
                .position(|w| *w == "portguid")
                .and_then(|i| words.get(i + 1));
            if let Some(g) = owner.and_then(|g| {
                u64::from_str_radix(g.trim_end_matches([':', ')']).trim_start_matches("0x"), 16)
                    .ok()
            }) {
                if let Some(&at) = port_by_guid.get(&g) {
                    port_lids.entry(at).or_default().insert(l);
                }
            }
        }
        tables.insert(guid, entries);
    }
    // ibroute lists every LID of a port: the base LID and 2^LMC - 1 more.
    for (at, lids) in port_lids {
        let lmc = lids.len().trailing_zeros() as u8;
        b.set_lid(
            at,
            Lid::from_raw(*lids.first().expect("a listed port has a LID")),
            lmc,
        )
        .expect("port exists");
    }
    let fabric = b.build().expect("read-back LIDs are consistent");
    let mut lfts = Routing::empty_lfts(&fabric);
    for si in fabric.switch_ids() {
        let entries = tables
            .get(&fabric.switch_node(si).guid)
            .expect("ibswitches lists every switch");
        for &(lid, port) in entries {
            lfts[si].set(Lid::from_raw(lid), PortNum::new(port));
        }
    }
    (
        fabric,
        Routing {
            engine: "read back".into(),
            lfts,
            sl2vl: None,
            path_sl: PathSl::Uniform(0),
        },
    )
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
            let vls: Vec<u8> = vls
                .split('|')
                .filter_map(|v| v.trim().parse().ok())
                .collect();
            Some((inp.trim().parse().ok()?, vls))
        })
        .collect()
}

pub fn ibdmchk(dir: &std::path::Path, extra: &[&str]) -> String {
    let out = Command::new("ibdmchk")
        .current_dir(dir)
        .args([
            "-s",
            "opensm-subnet.lst",
            "-f",
            "opensm.fdbs",
            "-m",
            "opensm.mcfdbs",
        ])
        .args(extra)
        .output()
        .expect("run ibdmchk (install ibutils)");
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// `net` with every switch declared with enhanced port 0, so that OpenSM
/// with `lmc_esp0 TRUE` gives switches LID ranges too, as ibdmchk's `-l`
/// assumes of every port.
pub fn with_enhanced_port0(net: &str) -> String {
    net.lines()
        .map(|l| {
            if l.starts_with("Switch") {
                format!("{l} enhanced port 0\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// ibdmchk on a routing with LMC > 0. Its `-l` walks LIDs from 1 in steps
/// of 2^LMC, so it finds only base LIDs one above a multiple of 2^LMC,
/// while OpenSM aligns them to multiples. The dumps are copied with every
/// LID raised by one (a relabelling: same paths, SLs and dependencies)
/// into `DIR/ibdmchk-lmc` and checked there. Every port needs 2^LMC LIDs
/// (switches: `with_enhanced_port0` and `lmc_esp0 TRUE`). The plugin's
/// SL2VL file when it wrote one (a routing on one VL has none).
pub fn ibdmchk_lmc(dir: &std::path::Path, lmc: u8) -> String {
    let sl2vl = "osmroute-sl2vl.txt";
    ibdmchk_lmc_with(dir, lmc, dir.join(sl2vl).exists().then_some(sl2vl))
}

/// `ibdmchk_lmc` with another SL2VL file of `dir` (None: no SL2VL file,
/// every SL on VL 0).
pub fn ibdmchk_lmc_with(dir: &std::path::Path, lmc: u8, sl2vl: Option<&str>) -> String {
    let out = dir.join("ibdmchk-lmc");
    std::fs::create_dir_all(&out).expect("create ibdmchk-lmc");
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    // "LID:0004" in the subnet file, "0x0004 : ..." in the FDB dump.
    let shift_hex = |w: &str, prefix: &str| -> Option<String> {
        let hex = w.strip_prefix(prefix)?;
        let lid = u16::from_str_radix(hex.get(..4)?, 16).ok()?;
        Some(format!("{prefix}{:04X}{}", lid + 1, &hex[4..]))
    };
    let subnet: String = read("opensm-subnet.lst")
        .lines()
        .map(|l| {
            l.split(' ')
                .map(|w| shift_hex(w, "LID:").unwrap_or_else(|| w.to_string()))
                .collect::<Vec<_>>()
                .join(" ")
                + "\n"
        })
        .collect();
    let fdbs: String = read("opensm.fdbs")
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((w, rest)) if w.len() == 6 => {
                shift_hex(w, "0x").map_or(l.to_string(), |w| format!("{w} {rest}")) + "\n"
            }
            _ => format!("{l}\n"),
        })
        .collect();
    for (name, text) in [("opensm-subnet.lst", subnet), ("opensm.fdbs", fdbs)] {
        std::fs::write(out.join(name), text).expect("write relabelled dump");
    }
    std::fs::copy(dir.join("opensm.mcfdbs"), out.join("opensm.mcfdbs")).expect("copy mcfdbs");
    let lmc = lmc.to_string();
    let mut args = vec!["-l", &lmc];
    // Another engine's routing leaves no path-SL file: every path on SL 0.
    let _ = std::fs::remove_file(out.join("osmroute-path-sl.txt"));
    if dir.join("osmroute-path-sl.txt").exists() {
        let path_sl: String = read("osmroute-path-sl.txt")
            .lines()
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                format!(
                    "{} {} {}\n",
                    w[0],
                    w[1].parse::<u16>().expect("DLID") + 1,
                    w[2]
                )
            })
            .collect();
        std::fs::write(out.join("osmroute-path-sl.txt"), path_sl)
            .expect("write relabelled path SLs");
        args.extend(["-c", "osmroute-path-sl.txt"]);
    }
    if let Some(sl2vl) = sl2vl {
        std::fs::copy(dir.join(sl2vl), out.join("osmroute-sl2vl.txt")).expect("copy sl2vl");
        args.extend(["-d", "osmroute-sl2vl.txt"]);
    }
    ibdmchk(&out, &args)
}

/// Writes `DIR/to`: the plugin's SL2VL file with every SL on VL 0, the same
/// paths without their VLs, for checks that must find credit loops.
pub fn write_flat_sl2vl(dir: &std::path::Path, to: &str) {
    let flat: String = std::fs::read_to_string(dir.join("osmroute-sl2vl.txt"))
        .expect("the plugin's SL2VL file")
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            format!("{} {} {} {}\n", w[0], w[1], w[2], ["0x00"; 8].join(" "))
        })
        .collect();
    std::fs::write(dir.join(to), flat).expect("write the flat SL2VL file");
}

/// Asserts that `live` (tables read back from the switches) is what
/// `engine` computes offline on the same fabric and LIDs; gives the
/// offline routing, whose SLs and SL2VL tables the switches were given.
pub fn assert_same_as_offline(engine: &str, fabric: &Fabric, live: &Routing) -> Routing {
    let offline = osmroute_core::pipeline::route_by_name(engine, fabric)
        .unwrap_or_else(|e| panic!("offline {engine}: {e}"))
        .routing;
    for (si, (switch, mine)) in live.lfts.iter().zip(&offline.lfts).enumerate() {
        for (lid, _) in fabric.lids() {
            assert_eq!(
                switch.get(lid),
                mine.get(lid),
                "switch index {si}, LID {lid}: switch vs offline {engine}"
            );
        }
    }
    offline
}
