//! `hxdor`: dimension-order routing for FlatFly/HyperX fabrics, hypercubes
//! and tori (Prisacari et al.'s direct-topologies paper, §3.2–3.4), with
//! the dimensions and coordinates recovered from the bare graph by link
//! equivalence (`topology::grid`). Named so as not to clash with OpenSM's
//! own `dor`, which needs its port numbering to follow the dimensions.
//!
//! A packet corrects one coordinate per hop, in a fixed order of the
//! dimensions; parallel cables of a dimension are spread over destination
//! LIDs. DOR on a FlatFly takes at most one hop per dimension, so one order
//! on one VL has no credit loop. Mixed DOR uses several orders, each on its
//! own SL and VL, chosen by the destination: order d mod O for the d-th host
//! of the destination switch. The paper's four orders for 4-D form a Latin
//! square (each dimension first in one order); for N dimensions we take
//! the N cyclic rotations of (1, …, N), also a Latin square, as many as
//! there are VLs (`hxdor.orders`). Packets never change order, and each
//! order has VLs of its own, so no dependency leaves an order's VLs.
//!
//! Rings (torus dimensions of 5 or more switches) are travelled the short
//! way round (ties split by destination LID) and need a dateline (§3.2):
//! the cable from the last position back to 0. Whether a path crosses it
//! in ring j is known at the source, so it is bit j of the path's SL, and
//! every switch sends a packet out on a ring-j cable on the order's second
//! VL if that bit is set, on its first otherwise. Within one direction of
//! a ring, paths that do not cross never use the dateline cable, and paths
//! that cross cover at most half the ring around it, so neither VL's
//! channels close a cycle; dimensions are still taken in order. With four
//! SL bits that allows four rings, as the paper says, and 16 / 2^rings
//! orders.

use std::collections::HashMap;

use crate::deadlock::vl_layers::{vls_allowed, why_too_few_vls};
use crate::error::Error;
use crate::fabric::{Fabric, Lid, NodeId, Peer, PortNum, SwitchId};
use crate::routing::{PathSl, Routing, Sl2Vl, SlVlTable, SwitchSls, NUM_SLS};
use crate::topology::grid::map_grid;

use crate::config::{ConfigError, OptionSpec, Section};
use crate::engines::{EngineInfo, Outcome};

pub const NAME: &str = "hxdor";

const ORDERS: OptionSpec = OptionSpec {
    key: "orders",
    default: "0",
    help: "dimension orders (Mixed DOR), one VL each (two on tori); 0: one per dimension, bounded by the VLs \
           and, on tori, by 16 / 2^rings SLs; 1: plain DOR on VL 0 (VLs 0 and 1 on tori)",
};

/// hxdor's options (`hxdor.*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HxdorOptions {
    /// Dimension orders (Mixed DOR), one VL each; 0: as many as there are
    /// dimensions, or VLs if fewer. 1 is plain DOR on one VL.
    pub orders: u8,
}

impl HxdorOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        Ok(HxdorOptions { orders: s.number(&ORDERS, 0, 15)? })
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "(Mixed) dimension-order routing for FlatFly/HyperX, hypercubes and tori (datelines in the SL), \
              mapped from the bare graph",
    needs_qos: true,
    options: &[&[ORDERS]],
    build: |s| {
        let options = HxdorOptions::read(s)?;
        Ok(Box::new(super::Configured { options, route: |f, o| route(f, o).map(Outcome::from) }))
    },
};

/// The dimension orders used: rotations of 0..dims, `count` of them.
fn orders(dims: usize, count: usize) -> Vec<Vec<usize>> {
    (0..count).map(|r| (0..dims).map(|i| (r + i) % dims).collect()).collect()
}

pub fn route(fabric: &Fabric, options: &HxdorOptions) -> Result<Routing, Error> {
    let graph = fabric.graph();
    if graph.switch_count() == 0 {
        return Err(Error::declined(NAME, "the fabric has no switches; nothing to route"));
    }
    let name = |s: SwitchId| fabric.describe_switch(s);
    // Mapped on switch ids (GUID order), so that dimensions and coordinates
    // are numbered alike whatever order the SM or a net file lists nodes in.
    let mapped =
        map_grid(graph).map_err(|e| Error::declined(NAME, format!("not a FlatFly, hypercube or torus: {e}")))?;
    let coords: &[Vec<usize>] = &mapped.coords;
    let dims = mapped.extent.len();
    let at: HashMap<&[usize], SwitchId> = graph.ids().map(|s| (coords[s].as_slice(), s)).collect();
    // DOR needs every position filled and every switch one hop from every
    // switch it differs from in one coordinate (in a ring: by ±1).
    for (s, c) in graph.ids().zip(coords) {
        for i in 0..dims {
            let k = mapped.extent[i];
            for v in 0..k {
                let mut other = c.clone();
                other[i] = v;
                let must_be_cabled = !mapped.ring[i] || (c[i] + 1) % k == v || (v + 1) % k == c[i];
                match at.get(other.as_slice()) {
                    Some(&t) if t != s && must_be_cabled && graph.bundle(s, t).is_empty() => {
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
    let rings: Vec<usize> = (0..dims).filter(|&i| mapped.ring[i]).collect();
    if rings.len() > 4 {
        return Err(Error::declined(
            NAME,
            format!(
                "a {}-ring torus needs a dateline bit per ring in the path SL, which has 4; use pssp or layered",
                rings.len()
            ),
        ));
    }
    let sls_per_order = 1usize << rings.len();
    let vls_per_order = if rings.is_empty() { 1 } else { 2 };
    let vls = vls_allowed(NAME, fabric, 0) as usize;
    if vls < vls_per_order {
        return Err(Error::declined(NAME, format!("rings need 2 VLs for their datelines; {}", why_too_few_vls(NAME, fabric, 0))));
    }
    let wanted = if options.orders == 0 { dims } else { options.orders as usize };
    let count = wanted.min(dims).min(vls / vls_per_order).min(NUM_SLS / sls_per_order).max(1);
    if count < wanted.min(dims) {
        log::warn!(
            "{NAME}: {count} dimension orders, not {}: only {vls} VLs are usable and each order takes {vls_per_order}",
            wanted.min(dims)
        );
    }
    let orders = orders(dims, count);
    let mut lfts = Routing::empty_lfts(fabric);
    let mut sls = SwitchSls::new(fabric);
    // Hosts per switch in port order: d, the destination host index.
    let mut host_index: HashMap<NodeId, usize> = HashMap::new();
    for s in graph.ids() {
        let mut d = 0;
        for peer in graph.peers(s) {
            if let Some(Peer::Ca(ca)) = peer {
                host_index.entry(ca.node).or_insert(d);
                d += 1;
            }
        }
    }
    for (owner, port) in fabric.end_ports() {
        let Some(t) = fabric.lid_switch(port.lid) else { continue };
        let is_switch = fabric.node(owner.node).is_switch();
        let order = if is_switch { 0 } else { host_index.get(&owner.node).copied().unwrap_or(0) % count };
        let last_port = fabric.delivery_port(owner);
        for lid in port.lids() {
            for s in graph.ids() {
                let datelines = rings
                    .iter()
                    .enumerate()
                    .filter(|&(_, &i)| ring_step(coords[s][i], coords[t][i], mapped.extent[i], lid).1)
                    .fold(0, |bits, (j, _)| bits | 1 << j);
                sls.set(s, lid, (order * sls_per_order + datelines) as u8);
                let out = if s == t {
                    last_port
                } else {
                    let dim = orders[order].iter().copied().find(|&i| coords[s][i] != coords[t][i]).expect("s != t");
                    let mut next = coords[s].clone();
                    next[dim] = match mapped.ring[dim] {
                        true => ring_step(coords[s][dim], coords[t][dim], mapped.extent[dim], lid).0,
                        false => coords[t][dim],
                    };
                    let choices = graph.bundle(s, at[next.as_slice()]);
                    choices[lid.idx() % choices.len()]
                };
                lfts[s].set(lid, out);
            }
        }
    }
    log::info!(
        "{NAME}: {dims}-D grid {:?} with {} ring(s), {count} dimension order(s) on {} VL(s)",
        mapped.extent,
        rings.len(),
        count * vls_per_order
    );
    if count == 1 && rings.is_empty() {
        return Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) });
    }
    // SL = order · 2^rings + dateline bits; an order's first VL is
    // order · vls_per_order.
    let first_vl: SlVlTable = std::array::from_fn(|sl| match sl / sls_per_order {
        o if o < count => (o * vls_per_order) as u8,
        _ => 0,
    });
    let mut sl2vl = Sl2Vl::new(fabric, first_vl);
    for s in graph.ids() {
        let ports = graph.peers(s);
        for (out, peer) in ports.iter().enumerate() {
            let Some(Peer::Switch { switch: t, .. }) = *peer else { continue };
            let Some(j) = rings.iter().position(|&i| coords[s][i] != coords[t][i]) else { continue };
            let table: SlVlTable = std::array::from_fn(|sl| first_vl[sl] + u8::from(sl & 1 << j != 0));
            for inp in 0..ports.len() {
                sl2vl.set_switch(s, PortNum::new(inp as u8), PortNum::new(out as u8), table);
            }
        }
    }
    for sl in 0..NUM_SLS as u8 {
        sl2vl.set_ca(sl, first_vl[sl as usize]);
    }
    Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: Some(sl2vl), path_sl: PathSl::PerSourceSwitch(sls) })
}

/// One hop along a ring of `k` from `from` towards `to`, the short way
/// round (half-way ties: up for even LIDs, down for odd): the next
/// position, and whether the path from `from` crosses the dateline
/// (the cable between k-1 and 0).
fn ring_step(from: usize, to: usize, k: usize, lid: Lid) -> (usize, bool) {
    let up = (to + k - from) % k;
    if up == 0 {
        return (from, false);
    }
    if up < k - up || (up == k - up && lid.raw() % 2 == 0) {
        ((from + 1) % k, to < from)
    } else {
        ((from + k - 1) % k, to > from)
    }
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

    fn config(orders: u8) -> HxdorOptions {
        HxdorOptions { orders }
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
    fn tori_route_minimally_on_datelines_without_loops() {
        // Rings of 5 and more take datelines; the ring of 4 maps as two
        // binary dimensions, the ring of 3 as a clique. Mixed DOR: orders
        // up to the dimensions, 8 VLs / 2 and 16 SLs / 2^rings.
        for (dims, widths, mixed_vls) in [
            (vec![5, 5], vec![1, 1], 2 * 2),
            (vec![6, 5, 7], vec![1, 2, 1], 2 * 2),
            (vec![5, 4, 3, 6], vec![1, 1, 1, 1], 2 * 4),
            (vec![5, 5, 5, 5], vec![1, 1, 1, 1], 2),
        ] {
            let f = fabric(gen::torus::torus(&dims, &widths, 2).unwrap());
            let diameter: usize = dims.iter().map(|k| k / 2).sum();
            for orders in [1, 0] {
                let r = route(&f, &config(orders)).unwrap_or_else(|e| panic!("{dims:?}: {e}"));
                let report = analyze(&f, &r);
                assert!(report.delivered(), "{dims:?}: {:?}", report.failures);
                assert_eq!(report.max_hops(), diameter, "{dims:?}: not minimal");
                assert!(report.credit_loop.is_none(), "{dims:?} orders {orders}");
                assert!(r.path_sl.sls_used().len() > 1, "{dims:?}: datelines must show in the SLs");
                assert_eq!(r.vls_needed(), if orders == 1 { 2 } else { mixed_vls }, "{dims:?} orders {orders}");
                if orders == 1 {
                    // Without the dateline VL the rings are credit loops.
                    let flat = Routing { sl2vl: None, ..r };
                    assert!(analyze(&f, &flat).credit_loop.is_some(), "{dims:?}: the check must be able to fail");
                }
            }
        }
    }

    #[test]
    fn ring_steps_go_the_short_way_and_know_their_dateline() {
        assert_eq!(ring_step(1, 3, 5, Lid::from_raw(0)), (2, false));
        assert_eq!(ring_step(4, 1, 5, Lid::from_raw(0)), (0, true));
        assert_eq!(ring_step(1, 4, 5, Lid::from_raw(0)), (0, true));
        assert_eq!(ring_step(3, 1, 5, Lid::from_raw(0)), (2, false));
        // A half-way tie on a ring of 6: even LIDs up, odd LIDs down.
        assert_eq!(ring_step(4, 1, 6, Lid::from_raw(2)), (5, true));
        assert_eq!(ring_step(4, 1, 6, Lid::from_raw(3)), (3, false));
    }

    #[test]
    fn declines_what_is_not_a_complete_grid() {
        let (b, _) = gen::degrade::drop_switches(&gen::torus::torus(&[6, 6], &[1, 1], 1).unwrap(), 0.03, 1).unwrap();
        let e = route(&fabric(b), &HxdorOptions::default()).unwrap_err().to_string();
        assert!(e.contains("hxdor declines"), "{e}");
        let mut b = gen::hyperx::hyperx(&[4, 4], &[1, 1], 1).unwrap();
        gen::degrade::drop_links(&mut b, 0.05, 1).unwrap();
        let e = route(&fabric(b), &HxdorOptions::default()).unwrap_err().to_string();
        assert!(e.contains("not cabled") || e.contains("not a FlatFly"), "{e}");
        let five_rings = fabric(gen::torus::torus(&[5, 5, 5, 5, 5], &[1, 1, 1, 1, 1], 1).unwrap());
        let e = route(&five_rings, &HxdorOptions::default()).unwrap_err().to_string();
        assert!(e.contains("5-ring torus needs a dateline bit per ring"), "{e}");
    }
}
