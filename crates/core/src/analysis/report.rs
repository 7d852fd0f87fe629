//! Everything `osmroute check` reports about a routing: delivery of every
//! CA-to-CA route, hop counts, load per inter-switch channel, SLs and VLs
//! used, and credit loops.

use std::collections::{BTreeMap, HashMap};

use super::credit::{Channel, DependencyGraph};
use crate::fabric::{Fabric, Lid, PortNum, PortRef, SwitchId};
use crate::routing::walk::Walk;
use crate::routing::{Routing, ALL_VL0};

pub struct Report {
    /// CA-port-to-CA-LID routes examined.
    pub routes: u64,
    /// Routes that do not arrive, by kind, with one example each.
    pub failures: BTreeMap<&'static str, (u64, String)>,
    /// Inter-switch hops -> routes.
    pub hops: BTreeMap<usize, u64>,
    /// Routes per directed inter-switch channel (switch, out-port).
    pub channel_load: HashMap<(SwitchId, PortNum), u64>,
    pub sls_used: Vec<u8>,
    pub vls_used: Vec<u8>,
    pub dependencies: usize,
    /// One credit loop, if any.
    pub credit_loop: Option<Vec<Channel>>,
}

impl Report {
    pub fn delivered(&self) -> bool {
        self.failures.is_empty()
    }

    pub fn max_hops(&self) -> usize {
        self.hops.keys().copied().max().unwrap_or(0)
    }

    /// Edge forwarding index: the most routes on one inter-switch channel.
    pub fn edge_forwarding_index(&self) -> u64 {
        self.channel_load.values().copied().max().unwrap_or(0)
    }
}

/// Traces every route from a CA port to a CA LID of another node.
///
/// Tables are destination-based, so CA ports on one switch share their
/// paths; with one SL for all paths and identical SL2VL rows for their
/// in-ports they also share VLs, and one representative per such group is
/// traced, weighted by the group's size.
pub fn analyze(fabric: &Fabric, routing: &Routing) -> Report {
    let mut report = Report {
        routes: 0,
        failures: BTreeMap::new(),
        hops: BTreeMap::new(),
        channel_load: HashMap::new(),
        sls_used: Vec::new(),
        vls_used: Vec::new(),
        dependencies: 0,
        credit_loop: None,
    };
    let graph = fabric.graph();
    let mut deps = DependencyGraph::new(graph);
    let dlids: Vec<(Lid, PortRef)> = fabric.ca_lids().collect();
    let shared_sl = routing.path_sl.same_per_switch();
    let vl_of = |s: SwitchId, inp: PortNum, out: PortNum, sl: u8| -> u8 {
        routing.sl2vl.as_ref().map_or(ALL_VL0[sl as usize & 0xf], |t| t.vl(s, inp, out, sl))
    };
    let mut sls = [false; 16];
    let mut vls = [false; 16];

    // Source groups: (representative CA port, its LID, members' nodes).
    let mut groups: Vec<(PortRef, Lid, Vec<_>)> = Vec::new();
    for s in fabric.switch_ids() {
        let mut by_row: HashMap<Vec<[u8; 16]>, usize> = HashMap::new();
        for (port, remote) in fabric.switch_node(s).links() {
            if fabric.node(remote.node).is_switch() {
                continue;
            }
            let Some(slid) = fabric.port(remote).map(|p| p.lid).filter(|l| !l.is_none()) else { continue };
            let key: Vec<[u8; 16]> = if shared_sl {
                (0..graph.port_slots(s))
                    .map(|o| routing.sl2vl.as_ref().map_or(ALL_VL0, |t| *t.switch_table(s, port, PortNum::new(o as u8))))
                    .collect()
            } else {
                vec![[port.raw(); 16]] // every source on its own
            };
            match by_row.get(&key) {
                Some(&g) => groups[g].2.push(remote.node),
                None => {
                    by_row.insert(key, groups.len());
                    groups.push((remote, slid, vec![remote.node]));
                }
            }
        }
    }

    for (src, slid, members) in &groups {
        for &(dlid, owner) in &dlids {
            let weight = members.iter().filter(|&&m| m != owner.node).count() as u64;
            if weight == 0 {
                continue;
            }
            report.routes += weight;
            let sl = routing.path_sl.sl(*slid, dlid);
            sls[sl as usize & 0xf] = true;
            let mut prev: Option<Channel> = None;
            let mut hops = 0usize;
            let mut failure = None;
            for hop in Walk::from_port(fabric, &routing.lfts, *src, dlid) {
                let hop = match hop {
                    Ok(hop) => hop,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                };
                let vl = vl_of(hop.switch, hop.in_port, hop.out_port, sl);
                vls[vl as usize & 0xf] = true;
                let here = Channel { switch: hop.switch, port: hop.out_port, vl };
                if let Some(p) = prev {
                    deps.add(p, here);
                    *report.channel_load.entry((p.switch, p.port)).or_insert(0) += weight;
                    hops += 1;
                }
                prev = Some(here);
            }
            match failure {
                Some(e) => {
                    let entry = report.failures.entry(e.kind()).or_insert((0, String::new()));
                    if entry.0 == 0 {
                        entry.1 = format!("{} -> LID {dlid}: {e}", crate::fabric::describe(fabric.node(src.node)));
                    }
                    entry.0 += weight;
                }
                None => *report.hops.entry(hops).or_insert(0) += weight,
            }
        }
    }
    report.sls_used = (0..16).filter(|&i| sls[i as usize]).collect();
    report.vls_used = (0..16).filter(|&i| vls[i as usize]).collect();
    report.dependencies = deps.edge_count();
    report.credit_loop = deps.find_cycle();
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::dragonfly::{dragonfly, Params};

    fn fabric(a: usize, h: usize, p: usize) -> Fabric {
        let mut b = dragonfly(&Params::new(a, h, p)).unwrap();
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn dla_is_delivered_minimal_and_credit_loop_free() {
        let f = fabric(4, 2, 2);
        let r = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        let rep = analyze(&f, &r);
        assert!(rep.delivered(), "{:?}", rep.failures);
        assert_eq!(rep.routes, 72 * 71);
        assert_eq!(rep.max_hops(), 3);
        assert_eq!(rep.vls_used, vec![0, 1]);
        assert_eq!(rep.sls_used, vec![0]);
        assert!(rep.credit_loop.is_none(), "{:?}", rep.credit_loop);
        assert!(rep.dependencies > 0);
    }

    #[test]
    fn dla_without_its_vl_shift_has_a_credit_loop() {
        let f = fabric(4, 2, 2);
        let mut r = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        r.sl2vl = None;
        let rep = analyze(&f, &r);
        assert!(rep.delivered());
        let cycle = rep.credit_loop.expect("a Dragonfly routed minimally on one VL has credit loops");
        assert!(cycle.len() >= 3);
        assert!(cycle.iter().all(|c| c.vl == 0));
    }

    #[test]
    fn broken_tables_are_counted_by_kind() {
        let f = fabric(3, 1, 1);
        let mut r = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        let victim = f.ca_lids().next().unwrap().0;
        for lft in &mut r.lfts {
            lft.set(victim, crate::routing::NO_PATH);
        }
        let rep = analyze(&f, &r);
        let (count, example) = &rep.failures["black hole"];
        assert_eq!(*count as usize, f.cas().count() - 1);
        assert!(example.contains(&format!("LID {victim}")), "{example}");
    }
}
