//! The grid's routing proper: per destination LID a tree of
//! dimension-order hops (and detours where the grid is damaged), each hop
//! on the VL its order, dateline or detour asks for.

use std::collections::HashMap;

use super::lines::Lines;
use super::updown::{Next, UpDown};
use crate::deadlock::hop_vls::{HopVlPlan, PlannedHop};
use crate::error::Decline;
use crate::fabric::{Fabric, Lid, NodeId, Peer, PortNum, SwitchId};
use crate::routing::{Lft, Routing, SwitchSls, NUM_SLS};

/// How SLs and VLs are laid out per order: `sls_per_order` SLs
/// (dateline bits) and `vls_per_order` VLs.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub(super) sls_per_order: usize,
    pub(super) vls_per_order: usize,
}

/// The mapped grid and its lines.
pub(super) struct Grid<'a> {
    pub(super) fabric: &'a Fabric,
    pub(super) coords: &'a [Vec<usize>],
    pub(super) extent: &'a [usize],
    pub(super) rings: &'a [usize],
    pub(super) lines: &'a Lines,
    /// Whether a clique line missing a cable detours through a third
    /// position of the line (else the path detours through other
    /// dimensions).
    pub(super) in_line_detours: bool,
}

/// Tables, SLs and the detours' SL plan of one try.
pub(super) struct Routed {
    pub(super) lfts: Vec<Lft>,
    pub(super) sls: SwitchSls,
    pub(super) plan: HopVlPlan,
    /// (source switch, LID) paths that detour through other dimensions.
    pub(super) detours: usize,
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

    pub(super) fn route(
        &self,
        orders: &[Vec<usize>],
        shape: Shape,
    ) -> Result<Routed, (Decline, String)> {
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
        let by_switch = self.destinations_by_switch(count);
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
                    let hops = self.detour_hops(
                        tree,
                        &next,
                        (s, t),
                        lid,
                        (order * shape.vls_per_order) as u8,
                        detour_vl,
                    )?;
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

    /// Every LID by the switch that delivers it, with the dimension order
    /// its destination host takes (Mixed DOR: the host's index on its
    /// switch, modulo the orders) and the port that delivers it.
    fn destinations_by_switch(&self, count: usize) -> Vec<Vec<(Lid, usize, PortNum)>> {
        let fabric = self.fabric;
        let graph = fabric.graph();
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
        by_switch
    }

    /// The hops of the path from `s` to `t` for `lid` where `s` itself is
    /// off dimension order: detour hops on `detour_vl`, then the
    /// dimension-order path of the switch the detour reaches, on its order's
    /// VLs (from `first_vl`, the second on a ring's cable past its dateline).
    fn detour_hops(
        &self,
        tree: &Tree,
        next: &[Option<SwitchId>],
        (s, t): (SwitchId, SwitchId),
        lid: Lid,
        first_vl: u8,
        detour_vl: u8,
    ) -> Result<Vec<PlannedHop>, (Decline, String)> {
        let fabric = self.fabric;
        let graph = fabric.graph();
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
                    let ring_bit = self.dateline_ring(x, y).is_some_and(|j| bits & 1 << j != 0);
                    first_vl + u8::from(ring_bit)
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
        Ok(hops)
    }

    /// The ring (its index among the rings) a hop moves along, if any.
    fn dateline_ring(&self, x: SwitchId, y: SwitchId) -> Option<usize> {
        self.rings
            .iter()
            .position(|&i| self.coords[x][i] != self.coords[y][i])
    }
}
