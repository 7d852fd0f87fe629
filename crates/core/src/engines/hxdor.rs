//! `hxdor`: dimension-order routing for FlatFly/HyperX fabrics and
//! hypercubes (Prisacari et al.'s direct-topologies paper, §3.3–3.4), with
//! the dimensions and coordinates recovered from the bare graph by link
//! equivalence (`topology::mapping`). Named so as not to clash with
//! OpenSM's own `dor`, which needs its port numbering to follow the
//! dimensions.
//!
//! A packet corrects one coordinate per hop, in a fixed order of the
//! dimensions; parallel cables of a dimension are spread over destination
//! LIDs. DOR on a FlatFly takes at most one hop per dimension, so one order
//! on one VL has no credit loop. Mixed DOR uses several orders, each on its
//! own SL = VL, chosen by the destination: order d mod O for the d-th host
//! of the destination switch. The paper's four orders for 4-D form a Latin
//! square (each dimension first in one order); for N dimensions we take
//! the N cyclic rotations of (1, …, N), also a Latin square, as many as
//! there are VLs (`hxdor.orders`). Packets never change VL, and each VL
//! carries one order, so no dependency leaves a VL and none closes a cycle.

use std::collections::HashMap;

use crate::deadlock::vl_layers::{layer_table, vls_allowed};
use crate::error::Error;
use crate::fabric::{describe, Fabric, Peer};
use crate::routing::{PathSl, Routing, Sl2Vl, SwitchSls, NO_PATH, NUM_SLS};
use crate::topology::switch_graph::GuidOrder;
use crate::topology::mapping::map_flatfly;
use crate::Config;

pub const NAME: &str = "hxdor";

/// The dimension orders used: rotations of 0..dims, `count` of them.
fn orders(dims: usize, count: usize) -> Vec<Vec<usize>> {
    (0..count).map(|r| (0..dims).map(|i| (r + i) % dims).collect()).collect()
}

pub fn route(fabric: &Fabric, config: &Config) -> Result<Routing, Error> {
    let adj = fabric.switch_adjacency();
    if adj.is_empty() {
        return Err(Error::declined(NAME, "the fabric has no switches; nothing to route"));
    }
    let name = |s: usize| describe(fabric.node(fabric.switches()[s]));
    // Mapped in switch GUID order, so that dimensions and coordinates are
    // numbered alike whatever order the SM or a net file lists nodes in.
    let by_guid = GuidOrder::new(fabric);
    let mapped = map_flatfly(&by_guid.graph.neighbours)
        .map_err(|e| Error::declined(NAME, format!("not a FlatFly/HyperX: {e}")))?;
    let coords: Vec<&Vec<usize>> = (0..adj.len()).map(|s| &mapped.coords[by_guid.rank_of[s]]).collect();
    let dims = mapped.extent.len();
    let at: HashMap<&[usize], usize> = coords.iter().enumerate().map(|(s, c)| (c.as_slice(), s)).collect();
    // Ports from each switch to each neighbour (parallel cables).
    let mut ports: Vec<HashMap<usize, Vec<u8>>> = vec![HashMap::new(); adj.len()];
    for (s, links) in adj.iter().enumerate() {
        for &(p, t, _) in links {
            ports[s].entry(t).or_default().push(p);
        }
    }
    // DOR needs every switch one hop from every switch it differs from in
    // one coordinate: complete dimension lines.
    for (s, c) in coords.iter().enumerate() {
        for i in 0..dims {
            for v in 0..mapped.extent[i] {
                let mut other = (*c).clone();
                other[i] = v;
                match at.get(other.as_slice()) {
                    Some(&t) if t != s && !ports[s].contains_key(&t) => {
                        return Err(Error::declined(
                            NAME,
                            format!("{} and {} differ in one dimension but are not cabled; DOR needs complete dimensions", name(s), name(t)),
                        ))
                    }
                    None => {
                        return Err(Error::declined(
                            NAME,
                            format!("no switch at coordinates {other:?} (next to {}); DOR needs every position filled", name(s)),
                        ))
                    }
                    _ => {}
                }
            }
        }
    }
    let wanted = if config.hxdor.orders == 0 { dims } else { config.hxdor.orders as usize };
    let vls = vls_allowed(NAME, fabric, 0) as usize;
    let count = wanted.min(dims).min(vls).clamp(1, NUM_SLS);
    if count < wanted.min(dims) {
        log::warn!("{NAME}: {count} dimension orders (one per VL), not {}: only {vls} VLs are usable", wanted.min(dims));
    }
    let orders = orders(dims, count);
    let peers = fabric.switch_port_peers();
    let mut lfts = Routing::empty_lfts(fabric);
    let mut sls = SwitchSls::new(fabric);
    // Hosts per switch in port order: d, the destination host index.
    let mut host_index: HashMap<usize, usize> = HashMap::new();
    for ports in &peers {
        let mut d = 0;
        for peer in ports {
            if let Some(Peer::Ca(ca)) = peer {
                host_index.entry(*ca).or_insert(d);
                d += 1;
            }
        }
    }
    for (owner, port) in fabric.end_ports() {
        let Some(t) = fabric.lid_switch(port.lid).and_then(|n| fabric.switch_index(n)) else { continue };
        let is_switch = fabric.node(owner.node).is_switch();
        let order = if is_switch { 0 } else { host_index.get(&owner.node).copied().unwrap_or(0) % count };
        let last_port = if is_switch { 0 } else { port.remote.map_or(NO_PATH, |r| r.port) };
        for lid in port.lid..port.lid + port.lid_count() as u16 {
            for s in 0..adj.len() {
                sls.set(s, lid, order as u8);
                lfts[s][lid as usize] = if s == t {
                    last_port
                } else {
                    let dim = orders[order].iter().copied().find(|&i| coords[s][i] != coords[t][i]).expect("s != t");
                    let mut next = coords[s].clone();
                    next[dim] = coords[t][dim];
                    let choices = &ports[s][&at[next.as_slice()]];
                    choices[lid as usize % choices.len()]
                };
            }
        }
    }
    log::info!("{NAME}: {dims}-D FlatFly {:?}, {count} dimension order(s) on as many VLs", mapped.extent);
    if count == 1 {
        return Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) });
    }
    let table = layer_table(count as u8);
    let mut sl2vl = Sl2Vl::new(fabric, table);
    for sl in 0..NUM_SLS as u8 {
        sl2vl.set_ca(sl, table[sl as usize]);
    }
    Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: Some(sl2vl), path_sl: PathSl::PerSourceSwitch(sls) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::analyze;
    use crate::gen;

    fn fabric(b: crate::FabricBuilder) -> Fabric {
        let mut b = gen::shuffle_ports(&b, 4);
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    fn config(orders: u8) -> Config {
        let mut c = Config::default();
        c.hxdor.orders = orders;
        c
    }

    #[test]
    fn orders_are_a_latin_square() {
        let o = orders(4, 4);
        for pos in 0..4 {
            let mut column: Vec<usize> = o.iter().map(|r| r[pos]).collect();
            column.sort_unstable();
            assert_eq!(column, vec![0, 1, 2, 3]);
        }
    }

    #[test]
    fn hyperx_and_hypercube_route_minimally_without_loops() {
        for (b, dims) in
            [(gen::hyperx::hyperx(&[4, 4, 4], &[2, 1, 1], 2).unwrap(), 3), (gen::hyperx::hypercube(6, 1, 2).unwrap(), 6)]
        {
            let f = fabric(b);
            for orders in [1, 0] {
                let r = route(&f, &config(orders)).unwrap();
                let report = analyze(&f, &r);
                assert!(report.delivered(), "{:?}", report.failures);
                assert!(report.max_hops() <= dims, "{} hops in {dims}-D", report.max_hops());
                assert!(report.credit_loop.is_none(), "orders {orders}");
                // Every order on its own VL (8 offered): min(dims, 8).
                assert_eq!(r.vls_needed() as usize, if orders == 1 { 1 } else { dims.min(8) });
            }
        }
    }

    #[test]
    fn mixed_orders_on_one_vl_would_have_loops() {
        let f = fabric(gen::hyperx::hyperx(&[3, 3, 3], &[1, 1, 1], 3).unwrap());
        let r = route(&f, &config(0)).unwrap();
        assert_eq!(r.vls_needed(), 3);
        let flat = Routing { sl2vl: None, ..r };
        assert!(analyze(&f, &flat).credit_loop.is_some(), "the check must be able to fail");
    }

    #[test]
    fn declines_what_is_not_a_complete_flatfly() {
        let torus = fabric(gen::torus::torus(&[5, 5], &[1, 1], 1).unwrap());
        let e = route(&torus, &Config::default()).unwrap_err().to_string();
        assert!(e.contains("hxdor declines"), "{e}");
        let mut b = gen::hyperx::hyperx(&[4, 4], &[1, 1], 1).unwrap();
        gen::degrade::drop_links(&mut b, 0.05, 1).unwrap();
        let e = route(&fabric(b), &Config::default()).unwrap_err().to_string();
        assert!(e.contains("not cabled") || e.contains("not a FlatFly"), "{e}");
    }
}
