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
//!
//! Damaged grids (cables or switches missing; the mapping tolerates the
//! paper's 20 % switches and 15 % cables on a FlatFly) are routed too:
//!
//! - A broken ring (`lines`) is travelled the way round that is left,
//!   by up*/down* over the line; intact rings keep the short way and their
//!   datelines. Within a line no dependency turns from down to up, so with
//!   dimensions still taken in order these hops need no VL of their own.
//! - Where the line of the next dimension has no cable to the
//!   destination's coordinate (a cable or the switch there is gone; in a
//!   hypercube, its one cable), the switch detours through other
//!   dimensions: up*/down* over the whole graph (one ranking for every
//!   destination) to the switch whose own dimension-order path is whole
//!   and makes the whole path shortest, and on from there in dimension
//!   order. Where that detour VL does not fit, a clique line missing a
//!   cable detours inside the dimension instead, through a third position
//!   (up*/down* over the line, on the order's VL as above), which is one
//!   hop longer than a detour through another dimension needs to be. The detour hops travel on a VL of
//!   their own: up*/down* keeps that VL acyclic, and it only ever leads
//!   into the orders' VLs, never back (a whole dimension-order path never
//!   passes a switch that needs a detour). Detoured paths get spare SLs
//!   under which every switch maps their hops to those VLs
//!   (`deadlock::hop_vls`); the detour VL takes the place of one order
//!   where there are several, so a damaged grid needs no more VLs than the
//!   complete one (one more where it had a single order).

mod lines;
mod updown;

use std::collections::HashMap;

use crate::deadlock::hop_vls::{HopVlPlan, PlannedHop};
use crate::deadlock::vl_layers::{vls_allowed, why_too_few_vls};
use crate::error::{Decline, Error};
use crate::fabric::{Fabric, Lid, NodeId, Peer, PortNum, SwitchId};
use crate::routing::{Lft, PathSl, Routing, Sl2Vl, SlVlTable, SwitchSls, NUM_SLS};
use crate::topology::grid::map_grid;
#[cfg(test)]
use lines::ring_step;
use lines::Lines;
use updown::{Next, UpDown};

use crate::config::{ConfigError, OptionSpec, Section};
use crate::engines::{EngineInfo, Outcome};

pub const NAME: &str = "hxdor";

const ORDERS: OptionSpec = OptionSpec {
    key: "orders",
    default: "0",
    help: "dimension orders (Mixed DOR), one VL each (two on tori); 0: one per dimension, bounded by the VLs \
           and, on tori, by 16 / 2^rings SLs; 1: plain DOR on VL 0 (VLs 0 and 1 on tori); a damaged grid that needs \
           detours through other dimensions uses one order fewer",
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
        Ok(HxdorOptions {
            orders: s.number(&ORDERS, 0, 15)?,
        })
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
    (0..count)
        .map(|r| (0..dims).map(|i| (r + i) % dims).collect())
        .collect()
}

pub fn route(fabric: &Fabric, options: &HxdorOptions) -> Result<Routing, Error> {
    let graph = fabric.graph();
    if graph.switch_count() == 0 {
        return Err(Error::declined(
            NAME,
            Decline::NoSwitches,
            "the fabric has no switches; nothing to route",
        ));
    }
    if let Some(lost) = graph.unreached_from(SwitchId::new(0)) {
        return Err(Error::declined(
            NAME,
            Decline::Disconnected,
            format!(
                "{} cannot be reached from {}: the fabric is in pieces",
                fabric.describe_switch(lost),
                fabric.describe_switch(SwitchId::new(0))
            ),
        ));
    }
    // Mapped on switch ids (GUID order), so that dimensions and coordinates
    // are numbered alike whatever order the SM or a net file lists nodes in.
    let mapped = map_grid(graph).map_err(|e| {
        Error::declined(
            NAME,
            Decline::NotItsTopology,
            format!("not a FlatFly, hypercube or torus: {e}"),
        )
    })?;
    let dims = mapped.extent.len();
    let lines = Lines::new(graph, &mapped);
    let rings: Vec<usize> = (0..dims).filter(|&i| mapped.ring[i]).collect();
    if rings.len() > 4 {
        return Err(Error::declined(
            NAME,
            Decline::OutOfSls,
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
        return Err(Error::declined(
            NAME,
            Decline::TooFewVls,
            format!(
                "rings need 2 VLs for their datelines; {}",
                why_too_few_vls(NAME, fabric, 0)
            ),
        ));
    }
    let wanted = if options.orders == 0 {
        dims
    } else {
        options.orders as usize
    };
    let mut count = wanted
        .min(dims)
        .min(vls / vls_per_order)
        .min(NUM_SLS / sls_per_order)
        .max(1);
    if count < wanted.min(dims) {
        log::warn!(
            "{NAME}: {count} dimension orders, not {}: only {vls} VLs are usable and each order takes {vls_per_order}",
            wanted.min(dims)
        );
    }
    let damaged = lines.damaged();
    let complete_count = count;
    // A missing cable of a clique is best detoured through other
    // dimensions (the path stays minimal); only where the detour VL does
    // not fit is it detoured inside the dimension, through a third position.
    let mut in_line_detours = false;
    let shape = Shape {
        sls_per_order,
        vls_per_order,
    };
    let routed = loop {
        let grid = Grid {
            fabric,
            coords: &mapped.coords,
            extent: &mapped.extent,
            rings: &rings,
            lines: &lines,
            in_line_detours,
        };
        match grid.route(&orders(dims, count), shape) {
            // The detour VL takes an order's place where there are several,
            // so a damaged grid needs no more VLs than the complete one.
            Ok(r) if r.detours > 0 && count == complete_count && count > 1 => {}
            Ok(r) if r.detours > 0 && count * vls_per_order >= vls && !in_line_detours => {
                in_line_detours = true;
                continue;
            }
            Ok(r) => break r,
            Err((code, why)) if count == 1 => return Err(Error::declined(NAME, code, why)),
            Err((_, why)) => {
                log::info!("{NAME}: with {count} dimension orders: {why}; trying one fewer")
            }
        }
        count -= 1;
    };
    let detour_vl = (count * vls_per_order) as u8;
    if routed.detours > 0 && detour_vl as usize >= vls {
        return Err(Error::declined(
            NAME,
            Decline::TooFewVls,
            format!(
                "detours around missing cables or switches need VL {detour_vl} beside dimension order's; {}",
                why_too_few_vls(NAME, fabric, 0)
            ),
        ));
    }
    let vls_used = count * vls_per_order + usize::from(routed.detours > 0);
    log::info!(
        "{NAME}: {dims}-D grid {:?} with {} ring(s), {count} dimension order(s) on {vls_used} VL(s); {damaged} line(s) \
         miss a cable or switch, {} (source switch, LID) path(s) detour through other dimensions on VL {detour_vl} \
         ({} spare SL(s))",
        mapped.extent,
        rings.len(),
        routed.detours,
        routed.plan.sls_used(),
    );
    let Routed {
        lfts,
        sls,
        plan,
        detours,
    } = routed;
    if count == 1 && rings.is_empty() && detours == 0 {
        return Ok(Routing {
            engine: NAME.to_string(),
            lfts,
            sl2vl: None,
            path_sl: PathSl::Uniform(0),
        });
    }
    // SL = order · 2^rings + dateline bits; an order's first VL is
    // order · vls_per_order. Spare SLs get what the detours' plan says.
    let first_vl: SlVlTable = std::array::from_fn(|sl| match sl / sls_per_order {
        o if o < count => (o * vls_per_order) as u8,
        _ => 0,
    });
    let mut sl2vl = Sl2Vl::new(fabric, first_vl);
    for s in graph.ids() {
        let ports = graph.peers(s);
        for (out, peer) in ports.iter().enumerate() {
            let Some(Peer::Switch { switch: t, .. }) = *peer else {
                continue;
            };
            let Some(j) = rings
                .iter()
                .position(|&i| mapped.coords[s][i] != mapped.coords[t][i])
            else {
                continue;
            };
            let table: SlVlTable = std::array::from_fn(|sl| match sl / sls_per_order < count {
                true => first_vl[sl] + u8::from(sl & 1 << j != 0),
                false => first_vl[sl],
            });
            for inp in 0..ports.len() {
                sl2vl.set_switch(s, PortNum::new(inp as u8), PortNum::new(out as u8), table);
            }
        }
    }
    plan.write(fabric, &mut sl2vl);
    for sl in 0..NUM_SLS as u8 {
        sl2vl.set_ca(sl, first_vl[sl as usize]);
    }
    Ok(Routing {
        engine: NAME.to_string(),
        lfts,
        sl2vl: Some(sl2vl),
        path_sl: PathSl::PerSourceSwitch(sls),
    })
}

/// How SLs and VLs are laid out per order: `sls_per_order` SLs
/// (dateline bits) and `vls_per_order` VLs.
#[derive(Clone, Copy)]
struct Shape {
    sls_per_order: usize,
    vls_per_order: usize,
}

/// The mapped grid and its lines.
struct Grid<'a> {
    fabric: &'a Fabric,
    coords: &'a [Vec<usize>],
    extent: &'a [usize],
    rings: &'a [usize],
    lines: &'a Lines,
    /// Whether a clique line missing a cable detours through a third
    /// position of the line (else the path detours through other
    /// dimensions).
    in_line_detours: bool,
}

/// Tables, SLs and the detours' SL plan of one try.
struct Routed {
    lfts: Vec<Lft>,
    sls: SwitchSls,
    plan: HopVlPlan,
    /// (source switch, LID) paths that detour through other dimensions.
    detours: usize,
}

/// How every switch gets to one destination switch in one order.
struct Tree {
    /// Whether the switch's own dimension-order path gets there (and so
    /// does every switch on it).
    dor: Vec<bool>,
    /// Dateline bits of the dimension-order path from each such switch.
    bits: Vec<u16>,
    /// Equally near detour next hops of the other switches.
    detour: Vec<Vec<SwitchId>>,
}

impl Grid<'_> {
    /// Bit j when the hop from `x` to `y` is the dateline cable of the
    /// j-th ring.
    fn dateline_bit(&self, x: SwitchId, y: SwitchId) -> u16 {
        self.rings
            .iter()
            .enumerate()
            .filter(|&(_, &i)| {
                let (a, b) = (self.coords[x][i], self.coords[y][i]);
                a.min(b) == 0 && a.max(b) == self.extent[i] - 1 && a != b
            })
            .fold(0, |bits, (j, _)| bits | 1 << j)
    }

    /// Where `s` goes towards `t` in dimension order `order` (`None`: the
    /// line of the first dimension to correct cannot get there).
    fn dor_next(&self, s: SwitchId, t: SwitchId, order: &[usize], lid: Lid) -> Option<SwitchId> {
        let i = order
            .iter()
            .copied()
            .find(|&i| self.coords[s][i] != self.coords[t][i])?;
        self.lines.of(s, i).next(
            self.coords[s][i],
            self.coords[t][i],
            lid,
            self.in_line_detours,
        )
    }

    /// Dimension order where every switch on the way is there and cabled;
    /// elsewhere up*/down* over the whole graph to a switch whose own
    /// dimension-order path gets there, the one that makes the whole path
    /// shortest.
    /// Which switches' own dimension-order path is whole does not depend
    /// on which of equally near in-line detours a LID takes (they end at
    /// the same switch), nor do datelines (a broken ring has one way).
    fn tree(
        &self,
        t: SwitchId,
        order: &[usize],
        lid: Lid,
        detour: &UpDown,
        adj: &[Vec<usize>],
    ) -> Tree {
        let n = self.coords.len();
        let mut next: Vec<Option<SwitchId>> = vec![None; n];
        let mut detours: Vec<Vec<SwitchId>> = vec![Vec::new(); n];
        let mut known: Vec<Option<bool>> = vec![None; n];
        let mut bits = vec![0u16; n];
        // Hops of each whole dimension-order path.
        let mut length = vec![0usize; n];
        known[t] = Some(true);
        for s in SwitchId::range(n) {
            let mut chain = Vec::new();
            let mut x = s;
            let reached = loop {
                if let Some(k) = known[x] {
                    break k;
                }
                chain.push(x);
                match self.dor_next(x, t, order, lid) {
                    // Dimension order only ever moves on (every line's next
                    // hops reach their target), so the chain is finite.
                    Some(y) => {
                        next[x] = Some(y);
                        x = y;
                    }
                    None => break false,
                }
            };
            for &c in chain.iter().rev() {
                let ok = reached && next[c].is_some_and(|y| known[y] == Some(true));
                if ok {
                    let y = next[c].expect("checked");
                    bits[c] = bits[y] | self.dateline_bit(c, y);
                    length[c] = length[y] + 1;
                }
                known[c] = Some(ok);
            }
        }
        let dor: Vec<bool> = known.iter().map(|k| *k == Some(true)).collect();
        if dor.iter().any(|d| !d) {
            // Detours head for the switch whose own path makes theirs
            // shortest.
            let seed: Vec<Option<usize>> = (0..n).map(|s| dor[s].then_some(length[s])).collect();
            let hops = detour.next_hops_from(adj, &seed);
            for s in SwitchId::range(n) {
                // The graph is connected: up*/down* reaches t, so every
                // switch without a whole path has a detour.
                if let (false, Next::Via(all)) = (dor[s], &hops[s.idx()]) {
                    detours[s] = all.iter().map(|&w| SwitchId::new(w)).collect();
                }
            }
        }
        Tree {
            dor,
            bits,
            detour: detours,
        }
    }

    /// Next switch from `s` for `lid` in the tree's routing (equally near
    /// choices spread over LIDs).
    fn next(
        &self,
        tree: &Tree,
        s: SwitchId,
        t: SwitchId,
        order: &[usize],
        lid: Lid,
    ) -> Option<SwitchId> {
        if s == t {
            None
        } else if tree.dor[s] {
            self.dor_next(s, t, order, lid)
        } else {
            let all = &tree.detour[s];
            (!all.is_empty()).then(|| all[lid.idx() % all.len()])
        }
    }

    /// Port from `x` to its neighbour `y` for `lid` (parallel cables
    /// spread over LIDs).
    fn port(&self, x: SwitchId, y: SwitchId, lid: Lid) -> PortNum {
        let choices = self.fabric.graph().bundle(x, y);
        choices[lid.idx() % choices.len()]
    }

    fn route(&self, orders: &[Vec<usize>], shape: Shape) -> Result<Routed, (Decline, String)> {
        let fabric = self.fabric;
        let graph = fabric.graph();
        let count = orders.len();
        let adj: Vec<Vec<usize>> = graph
            .ids()
            .map(|s| graph.neighbours(s).iter().map(|t| t.idx()).collect())
            .collect();
        let detour = UpDown::new(&adj, &vec![true; adj.len()]);
        let detour_vl = (count * shape.vls_per_order) as u8;
        let mut lfts = Routing::empty_lfts(fabric);
        let mut sls = SwitchSls::new(fabric);
        let mut plan =
            HopVlPlan::new(((count * shape.sls_per_order) as u8..NUM_SLS as u8).collect());
        let mut detours = 0;
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
        // Destinations by switch, so that only one switch's trees are kept.
        let mut by_switch: Vec<Vec<(Lid, usize, PortNum)>> = vec![Vec::new(); graph.switch_count()];
        for (owner, port) in fabric.end_ports() {
            let Some(t) = fabric.lid_switch(port.lid) else {
                continue;
            };
            let is_switch = fabric.node(owner.node).is_switch();
            let order = if is_switch {
                0
            } else {
                host_index.get(&owner.node).copied().unwrap_or(0) % count
            };
            by_switch[t].extend(
                port.lids()
                    .map(|lid| (lid, order, fabric.delivery_port(owner))),
            );
        }
        for (t, lids) in graph.ids().zip(&by_switch) {
            // Trees depend on the LID only through half-way ties on rings.
            let mut trees: HashMap<(usize, bool), Tree> = HashMap::new();
            for &(lid, order, last_port) in lids {
                let parity = !self.rings.is_empty() && lid.raw() % 2 == 0;
                let tree = trees
                    .entry((order, parity))
                    .or_insert_with(|| self.tree(t, &orders[order], lid, &detour, &adj));
                let base = order * shape.sls_per_order;
                let next: Vec<Option<SwitchId>> = graph
                    .ids()
                    .map(|s| self.next(tree, s, t, &orders[order], lid))
                    .collect();
                for s in graph.ids() {
                    let out = match (s == t, next[s]) {
                        (true, _) => last_port,
                        (false, Some(y)) => self.port(s, y, lid),
                        (false, None) => {
                            return Err((
                                Decline::TooDamaged,
                                format!(
                                    "{} has no route to {}",
                                    fabric.describe_switch(s),
                                    fabric.describe_switch(t)
                                ),
                            ))
                        }
                    };
                    lfts[s].set(lid, out);
                    if tree.dor[s] {
                        sls.set(s, lid, (base + tree.bits[s] as usize) as u8);
                        continue;
                    }
                    // Detour hops on the detour VL, then the dimension-order
                    // path of the switch it reaches, on that path's VLs.
                    let mut hops = Vec::new();
                    let (mut x, mut in_port) = (s, None);
                    let mut suffix_bits = None;
                    while x != t {
                        let y = next[x].ok_or_else(|| {
                            (
                                Decline::TooDamaged,
                                format!(
                                    "{} has no route to {}",
                                    fabric.describe_switch(x),
                                    fabric.describe_switch(t)
                                ),
                            )
                        })?;
                        let out = self.port(x, y, lid);
                        if tree.dor[x] && suffix_bits.is_none() {
                            suffix_bits = Some(tree.bits[x]);
                        }
                        let vl = match suffix_bits {
                            None => detour_vl,
                            Some(bits) => {
                                let first = (order * shape.vls_per_order) as u8;
                                let ring_bit =
                                    self.dateline_ring(x, y).is_some_and(|j| bits & 1 << j != 0);
                                first + u8::from(ring_bit)
                            }
                        };
                        hops.push(PlannedHop {
                            switch: x,
                            in_port,
                            out_port: out,
                            vl,
                        });
                        in_port = match graph.peer(x, out) {
                            Some(Peer::Switch { port, .. }) => Some(port),
                            _ => None,
                        };
                        x = y;
                    }
                    let sl = plan.place(&hops).ok_or_else(|| {
                        let why = match NUM_SLS - count * shape.sls_per_order {
                            0 => "the orders take every SL, none is left for detours".to_string(),
                            spare => format!(
                                "the detours contradict each other's VLs on more port pairs than the {spare} \
                                 spare SLs tell apart"
                            ),
                        };
                        (Decline::OutOfSls, why)
                    })?;
                    sls.set(s, lid, sl);
                    detours += 1;
                }
            }
        }
        Ok(Routed {
            lfts,
            sls,
            plan,
            detours,
        })
    }

    /// The ring (its index among the rings) a hop moves along, if any.
    fn dateline_ring(&self, x: SwitchId, y: SwitchId) -> Option<usize> {
        self.rings
            .iter()
            .position(|&i| self.coords[x][i] != self.coords[y][i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::analyze;
    use crate::fabric::VlBudget;
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
        for (b, dims) in [
            (gen::hyperx::hyperx(&[4, 4, 4], &[2, 1, 1], 2).unwrap(), 3),
            (gen::hyperx::hypercube(6, 1, 2).unwrap(), 6),
        ] {
            let f = fabric(b);
            for orders in [1, 0] {
                let r = route(&f, &config(orders)).unwrap();
                let report = analyze(&f, &r);
                assert!(report.delivered(), "{:?}", report.failures);
                assert!(
                    report.max_hops() <= dims,
                    "{} hops in {dims}-D",
                    report.max_hops()
                );
                assert!(report.credit_loop.is_none(), "orders {orders}");
                // Every order on its own VL (8 offered): min(dims, 8).
                assert_eq!(
                    r.vls_needed() as usize,
                    if orders == 1 { 1 } else { dims.min(8) }
                );
            }
        }
    }

    #[test]
    fn mixed_orders_on_one_vl_would_have_loops() {
        let f = fabric(gen::hyperx::hyperx(&[3, 3, 3], &[1, 1, 1], 3).unwrap());
        let r = route(&f, &config(0)).unwrap();
        assert_eq!(r.vls_needed(), 3);
        let flat = Routing { sl2vl: None, ..r };
        assert!(
            analyze(&f, &flat).credit_loop.is_some(),
            "the check must be able to fail"
        );
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
                assert!(
                    r.path_sl.sls_used().len() > 1,
                    "{dims:?}: datelines must show in the SLs"
                );
                assert_eq!(
                    r.vls_needed(),
                    if orders == 1 { 2 } else { mixed_vls },
                    "{dims:?} orders {orders}"
                );
                if orders == 1 {
                    // Without the dateline VL the rings are credit loops.
                    let flat = Routing { sl2vl: None, ..r };
                    assert!(
                        analyze(&f, &flat).credit_loop.is_some(),
                        "{dims:?}: the check must be able to fail"
                    );
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

    /// `b` with a fraction of its switches and then of its cables gone.
    fn damaged(b: crate::FabricBuilder, switches: f64, links: f64, seed: u64) -> Fabric {
        let (mut b, _) = gen::degrade::drop_switches(&b, switches, seed).unwrap();
        gen::degrade::drop_links(&mut b, links, seed).unwrap();
        fabric(b)
    }

    /// Routes a damaged grid and checks delivery, credit loops and the VL
    /// bound; returns the routing.
    fn route_damaged(f: &Fabric, what: &str, intact_vls: u8) -> Routing {
        let r = route(f, &HxdorOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let report = analyze(f, &r);
        assert!(report.delivered(), "{what}: {:?}", report.failures);
        assert!(report.credit_loop.is_none(), "{what}: credit loop");
        assert!(
            r.vls_needed() <= intact_vls.max(1) + 1,
            "{what}: {} VLs, the intact grid {intact_vls}",
            r.vls_needed()
        );
        r
    }

    #[test]
    fn damaged_flatflies_and_hypercubes_route_without_loops_up_to_the_mappings_tolerance() {
        // (generator, VLs of the intact grid, damage levels: switches, links).
        let hyperx = || gen::hyperx::hyperx(&[4, 4, 4], &[1, 1, 1], 2).unwrap();
        let cube = || gen::hyperx::hypercube(6, 1, 2).unwrap();
        let mut detoured = 0;
        for (name, make, intact_vls) in [
            (
                "hyperx 4x4x4",
                &hyperx as &dyn Fn() -> crate::FabricBuilder,
                3,
            ),
            ("hypercube 6", &cube, 6),
        ] {
            let levels: &[(f64, f64)] = if name.starts_with("hyperx") {
                &[
                    (0.0, 0.02),
                    (0.0, 0.05),
                    (0.0, 0.15),
                    (0.05, 0.05),
                    (0.20, 0.15),
                ]
            } else {
                &[
                    (0.0, 0.02),
                    (0.0, 0.05),
                    (0.0, 0.10),
                    (0.05, 0.05),
                    (0.15, 0.10),
                ]
            };
            for &(switches, links) in levels {
                for seed in 1..=2 {
                    let what = format!("{name} -{switches} switches -{links} links seed {seed}");
                    let f = damaged(make(), switches, links, seed);
                    let r = route_damaged(&f, &what, intact_vls);
                    // Detours through other dimensions take an order's VL,
                    // so no more VLs than the complete grid.
                    assert!(
                        r.vls_needed() <= intact_vls,
                        "{what}: {} VLs",
                        r.vls_needed()
                    );
                    if r.path_sl
                        .sls_used()
                        .iter()
                        .any(|&sl| sl as usize >= r.vls_needed() as usize - 1)
                    {
                        detoured += 1;
                    }
                }
            }
        }
        assert!(
            detoured > 0,
            "some damage must need detours through other dimensions"
        );
    }

    #[test]
    fn a_clique_missing_cables_detours_inside_its_dimension_when_one_vl_is_all_there_is() {
        // A 1-D FlatFly (one clique of 6) missing two cables, on one VL:
        // no room for the detour VL, so the two switches of a dead cable
        // reach each other through a third, inside the dimension. With
        // 8 VLs the same pairs detour on a VL of their own.
        let mut b = gen::hyperx::hyperx(&[6], &[1], 1).unwrap();
        gen::degrade::drop_links(&mut b, 0.14, 3).unwrap();
        let mut one_vl = gen::shuffle_ports(&b, 4);
        one_vl.assign_lids_sequential(0).unwrap();
        one_vl.set_vl_budget(VlBudget {
            data_vls: 1,
            limited_by: "the test offers 1".into(),
            ..VlBudget::default()
        });
        let f = one_vl.build().unwrap();
        let r = route_damaged(&f, "K6 minus 2 cables on 1 VL", 1);
        assert_eq!(r.vls_needed(), 1);
        assert_eq!(analyze(&f, &r).max_hops(), 2);
        let f = fabric(b);
        let r = route_damaged(&f, "K6 minus 2 cables", 1);
        assert_eq!(r.vls_needed(), 2);
        assert_eq!(analyze(&f, &r).max_hops(), 2);
    }

    #[test]
    fn damaged_tori_keep_their_datelines_without_loops() {
        // On a 5 × 5 a switch and a cable gone can leave too few switches
        // to tell a ring's two slabs from a broken square (topology::grid):
        // switches go on the 3-D torus only.
        let cables = [(0.0, 0.01, 1), (0.0, 0.03, 2), (0.0, 0.05, 3)];
        let switches = [
            (0.0, 0.01, 1),
            (0.0, 0.05, 3),
            (0.01, 0.0, 1),
            (0.02, 0.0, 2),
            (0.02, 0.02, 4),
        ];
        for (dims, levels) in [(vec![5, 5], &cables[..]), (vec![6, 5, 7], &switches[..])] {
            let intact_vls = 4;
            let widths = vec![1; dims.len()];
            let make = || gen::torus::torus(&dims, &widths, 2).unwrap();
            for &(switches, links, seed) in levels {
                let what =
                    format!("torus {dims:?} -{switches} switches -{links} links seed {seed}");
                let f = damaged(make(), switches, links, seed);
                let r = route_damaged(&f, &what, intact_vls);
                assert!(r.vls_needed() <= 4, "{what}: {} VLs", r.vls_needed());
                // Intact rings still cross their datelines on the second VL.
                let sls = r.path_sl.sls_used();
                assert!(
                    sls.iter().any(|&sl| sl % 4 != 0),
                    "{what}: no dateline bit in {sls:?}"
                );
            }
        }
        // A single cut cable: its ring is travelled the way round that is
        // left, with no detour VL (2 orders × 2 VLs, as intact).
        let mut b = gen::torus::torus(&[5, 5], &[1, 1], 1).unwrap();
        gen::degrade::drop_links(&mut b, 0.02, 1).unwrap();
        let f = fabric(b);
        let r = route_damaged(&f, "5x5 minus a cable", 4);
        assert_eq!(r.vls_needed(), 4);
        let flat = Routing { sl2vl: None, ..r };
        assert!(
            analyze(&f, &flat).credit_loop.is_some(),
            "the check must be able to fail"
        );
    }

    #[test]
    fn declines_what_it_cannot_route() {
        let five_rings = fabric(gen::torus::torus(&[5, 5, 5, 5, 5], &[1, 1, 1, 1, 1], 1).unwrap());
        let e = route(&five_rings, &HxdorOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("5-ring torus needs a dateline bit per ring"),
            "{e}"
        );
        let sf = fabric(gen::slimfly::slimfly(5, 1).unwrap());
        let e = route(&sf, &HxdorOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("hxdor declines"), "{e}");
    }
}
