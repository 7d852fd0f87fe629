//! `mlid`: the Multiple LID routing of Lin, Chung & Huang ("A Multiple LID
//! Routing Scheme for Fat-Tree-Based InfiniBand Networks"), for m-port
//! n-trees and the generalized fat trees clusters run (parallel cables,
//! missing cables and switches, hosts above the leaves), recognised from
//! the bare graph (`topology::gft`).
//!
//! Every host has 2^LMC LIDs; LMC = log2((m/2)^(n−1)) gives one LID per
//! path between the two halves of an m-port n-tree. Every LID travels
//! up*/down*: down where the switch lies above its host, otherwise up by
//! the digits `lid_digits` gives that LID — the host's own d-mod-k digits
//! plus its offset's, so base LIDs alone spread like ftree's while a
//! host's LIDs still reach every up-path once. In a damaged tree a switch
//! takes the shortest up*/down* path there is. With fewer LIDs than paths
//! the offsets cover fewer paths, still spread. Sources pick the LID with
//! the path selection (§4.2, generalised: `choice_of`). Up*/down* routes
//! have no credit loops: one VL, SL2VL left as it is.
//!
//! Hosts on a switch above the leaves (a storage node on a top switch)
//! may have no up*/down* path to a destination: two top switches have no
//! switch above both. Such a pair goes down from its switch to the
//! nearest switch from which the destination's switch is reached going
//! only up, then up, on path SL 1, which every port maps to VL 1 (SL 0
//! stays on VL 0) — when the fabric offers two VLs and programs SL2VL
//! (`qos TRUE`); otherwise those pairs stay unrouted, logged. Why that
//! keeps the fabric free of credit loops: VL 0 carries only up*/down*
//! paths (acyclic, as before); VL 1 carries only down*-then-up* paths,
//! which never turn from an up-cable onto a down-cable, and a cycle of
//! channels in a tree, whose every cable joins two adjacent heights,
//! must climb and descend, so somewhere turn from up to down; no packet
//! changes VL on the way, so nothing leads from VL 1 back to VL 0. The
//! LFT entry for a LID is shared by every source: the descent only
//! enters switches that have no up*/down* path to the destination (so no
//! VL 0 route passes them) and turns only at a switch whose up*/down*
//! route, the one every other source there takes, climbs all the way
//! (`UpDownDistances::climbs`).

use crate::config::{ConfigError, OptionSpec, Section};
use crate::engines::{EngineInfo, Outcome};
use crate::error::{Decline, Error};
use crate::fabric::{Fabric, Lid, PortNum, PortRef, SwitchId};
use crate::routing::{DlidChoice, PathSl, Routing, Sl2Vl, SlVlTable, SwitchSls, NO_PATH, NUM_SLS};
use crate::topology::gft::{recognize, GenFatTree};

pub const NAME: &str = "mlid";

const RAISE_LMC: OptionSpec = OptionSpec {
    key: "raise_lmc",
    default: "FALSE",
    help: "raise OpenSM's lmc to what the tree needs and have it reassign every LID (see mlid in the README)",
};

/// mlid's options (`mlid.*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MlidOptions {
    /// When OpenSM's `lmc` is below what the tree needs, raise it and ask
    /// OpenSM for a heavy sweep that reassigns every LID (disruptive:
    /// every host's LIDs change once).
    pub raise_lmc: bool,
}

impl MlidOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        Ok(MlidOptions {
            raise_lmc: s.flag(&RAISE_LMC)?,
        })
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary:
        "multiple-LID routing for m-port n-trees: 2^LMC up*/down* paths per host, chosen per source",
    needs_qos: false,
    options: &[&[RAISE_LMC]],
    build: |s| {
        Ok(Box::new(super::Configured {
            options: MlidOptions::read(s)?,
            route: outcome,
        }))
    },
};

/// The routing, the path selection every source needs to use it, and the
/// LMC to ask OpenSM for when `raise_lmc` is on and the LIDs fall short.
fn outcome(fabric: &Fabric, options: &MlidOptions) -> Result<Outcome, Error> {
    let tree = tree_of(fabric)?;
    let routing = route_tree(fabric, &tree)?;
    let lmc_request = if options.raise_lmc {
        lmc_for(fabric, &tree)
    } else {
        None
    };
    Ok(Outcome {
        routing,
        dlid_choice: Some(choice_of(fabric, &tree)),
        lmc_request,
    })
}

/// The LMC the tree asks for and the LMC to configure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LmcPlan {
    /// log2(up-paths from a leaf to the top), rounded up, at most 7.
    pub needed: u8,
    /// `needed`, or the largest LMC whose LIDs fit the LID space.
    pub target: u8,
    pub max_lid: u16,
}

impl LmcPlan {
    /// `max_lid`: the highest LID the switches' tables hold. OpenSM aligns
    /// every multi-LID range to 2^LMC, so a switch's single LID between two
    /// hosts' ranges can cost up to 2^LMC LIDs: counted as that, to be safe.
    pub fn new(tree: &GenFatTree, switches: usize, max_lid: u16) -> Self {
        let needed = (tree
            .paths()
            .min(1 << 7)
            .next_power_of_two()
            .trailing_zeros() as u8)
            .min(7);
        let ports = tree.hosts() + switches;
        let fits = |lmc: u8| ports << lmc <= max_lid as usize;
        let target = (0..=needed).rev().find(|&l| fits(l)).unwrap_or(0);
        LmcPlan {
            needed,
            target,
            max_lid,
        }
    }

    /// Why `target` is below `needed`, if it is.
    pub fn limit_note(&self, tree: &GenFatTree) -> Option<String> {
        (self.target < self.needed).then(|| {
            format!(
                "LMC {} ({} LIDs per host) would need up to {} LIDs, more than the {} the switches' \
                 forwarding tables hold; LMC {} is the largest that fits",
                self.needed,
                1u32 << self.needed,
                tree.hosts() << self.needed,
                self.max_lid,
                self.target
            )
        })
    }
}

/// The recognised tree, or a decline that says what is wrong. With LMC > 0
/// it also says which fallback works: OpenSM's ftree refuses LMC > 0
/// ("LMC > 0 is not supported by fat-tree routing"), so `mlid,ftree`
/// would end in minhop; updn routes every LID up*/down* and finds its
/// roots itself (checked under ibsim: tests/soak_opensm.rs).
pub fn tree_of(fabric: &Fabric) -> Result<GenFatTree, Error> {
    recognize(fabric).map_err(|why| {
        let fallback = if fabric.lmc() > 0 {
            format!(
                "; with lmc {} the next engine should be updn (`routing_engine mlid,updn`): ftree refuses LMC > 0",
                fabric.lmc()
            )
        } else {
            String::new()
        };
        Error::declined(
            NAME,
            Decline::NotItsTopology,
            format!("the fabric is not a fat tree: {why}{fallback}"),
        )
    })
}

/// The LMC to configure for this fabric, when it differs from the one the
/// LIDs were assigned with (for `mlid.raise_lmc`).
pub fn lmc_to_request(fabric: &Fabric) -> Result<Option<u8>, Error> {
    Ok(lmc_for(fabric, &tree_of(fabric)?))
}

fn lmc_for(fabric: &Fabric, tree: &GenFatTree) -> Option<u8> {
    let plan = LmcPlan::new(tree, fabric.switch_count(), fabric.max_unicast_lid());
    (fabric.lmc() < plan.target).then_some(plan.target)
}

pub fn route(fabric: &Fabric, _options: &MlidOptions) -> Result<Routing, Error> {
    route_tree(fabric, &tree_of(fabric)?)
}

fn route_tree(fabric: &Fabric, tree: &GenFatTree) -> Result<Routing, Error> {
    let plan = LmcPlan::new(tree, fabric.switch_count(), fabric.max_unicast_lid());
    log::info!(
        "{NAME}: fat tree of {}: {} hosts, {} switches, {} up-paths per leaf",
        tree.shape(),
        tree.hosts(),
        fabric.switch_count(),
        tree.paths()
    );
    if let Some(note) = plan.limit_note(tree) {
        log::warn!("{NAME}: {note}");
    }
    let lmc = fabric.lmc();
    if lmc < plan.target {
        log::warn!(
            "{NAME}: routing with lmc {lmc}: {} of the {} paths per host pair; set `lmc {}` in opensm.conf \
             (or mlid.raise_lmc TRUE) for all of them",
            1u32 << lmc,
            tree.paths(),
            plan.target
        );
    }
    let graph = fabric.graph();
    let mut lfts = Routing::empty_lfts(fabric);
    // Destinations by the switch that delivers them.
    let mut at_switch: Vec<Vec<Destination>> = vec![Vec::new(); graph.switch_count()];
    let hosts = tree.hosts();
    for (at, port) in fabric.end_ports() {
        let node = fabric.node(at.node);
        let (switch, deliver, index) = if node.is_switch() {
            let Some(s) = fabric.switch_id(at.node) else {
                continue;
            };
            (s, PortNum::MANAGEMENT, hosts + s.idx())
        } else {
            let Some(&index) = tree.host_index.get(&at) else {
                continue;
            };
            let Some(remote) = port.remote else { continue };
            let Some(s) = fabric.switch_id(remote.node) else {
                continue;
            };
            (s, remote.port, index)
        };
        at_switch[switch.idx()].push(Destination {
            base: port.lid,
            count: port.lid_count(),
            deliver,
            index,
        });
    }
    let mut routed = 0usize;
    // (source switch with hosts, destination switch) without an up*/down*
    // path, once per destination port.
    let mut cut_off: Vec<(SwitchId, SwitchId)> = Vec::new();
    // The same, routed down-then-up on VL 1 (counted at base LIDs).
    let mut on_vl1 = 0usize;
    let second_vl = fabric.vl_budget().usable() >= 2;
    let mut sls: Option<SwitchSls> = None;
    let mut dist = UpDownDistances::new(graph.switch_count());
    let mut plans = vec![Plan::default(); graph.switch_count()];
    for t in graph.ids() {
        if at_switch[t.idx()].is_empty() {
            continue;
        }
        dist.compute(tree, t, second_vl);
        for s in graph.ids() {
            dist.plan(fabric, tree, (s, t), &mut plans[s.idx()]);
        }
        for d in &at_switch[t.idx()] {
            routed += 1;
            let base_digits = tree.digits(d.index);
            for (o, lid) in (0..d.count as usize).zip(d.lids()) {
                let choice = lid_digits(tree, &base_digits, o);
                let to_switch = d.deliver.is_management();
                for s in graph.ids() {
                    let plan = &plans[s.idx()];
                    let out = if s == t {
                        d.deliver
                    } else {
                        plan.port(&choice, to_switch)
                    };
                    if o == 0 && out == NO_PATH && graph.hosts(s) > 0 {
                        cut_off.push((s, t));
                    }
                    // Only hosts' packets take SL 1: a switch without
                    // hosts passes VL 1 packets on, its own management
                    // packets need no data VL.
                    if plan.descends_on_vl1 && !to_switch && graph.hosts(s) > 0 {
                        sls.get_or_insert_with(|| SwitchSls::new(fabric))
                            .set(s, lid, VL1_SL);
                        on_vl1 += usize::from(o == 0);
                    }
                    lfts[s.idx()].set(lid, out);
                }
            }
        }
    }
    if let Some(&(s, t)) = cut_off.first() {
        let why = if second_vl {
            "not even down to a switch from which the destination's is reached going only up"
                .to_string()
        } else {
            format!(
                "the down-then-up path that would reach them needs a second VL, and the fabric offers {} \
                 (needs `qos TRUE` and 2 data VLs): on one VL it could close a credit loop",
                fabric.vl_budget().usable()
            )
        };
        log::warn!(
            "{NAME}: {} host-switch/destination pairs have no up*/down* path (first: hosts on {} to {}); \
             their LIDs stay unrouted there: {why}",
            cut_off.len(),
            fabric.describe_switch(s),
            fabric.describe_switch(t)
        );
    }
    let (sl2vl, path_sl) = match sls {
        Some(sls) => {
            log::info!(
                "{NAME}: {on_vl1} host-switch/destination pairs without an up*/down* path routed down, then up, \
                 on SL {VL1_SL} / VL 1"
            );
            (Some(vl1_tables(fabric)), PathSl::PerSourceSwitch(sls))
        }
        None => (None, PathSl::Uniform(0)),
    };
    let vls = if sl2vl.is_some() { 2 } else { 1 };
    log::info!("{NAME}: {routed} ports' LIDs routed on up*/down* paths, {vls} VL(s)");
    Ok(Routing {
        engine: NAME.to_string(),
        lfts,
        sl2vl,
        path_sl,
    })
}

/// The path SL of the down-then-up routes; every port maps it to VL 1.
const VL1_SL: u8 = 1;

/// SL 1 on VL 1 on every switch port pair and CA port, every other SL on
/// VL 0.
fn vl1_tables(fabric: &Fabric) -> Sl2Vl {
    let mut table: SlVlTable = [0; NUM_SLS];
    table[VL1_SL as usize] = 1;
    let mut tables = Sl2Vl::new(fabric, table);
    tables.set_ca(0, 0);
    tables.set_ca(VL1_SL, 1);
    tables
}

/// An end port whose LIDs one switch delivers.
#[derive(Clone, Debug)]
struct Destination {
    base: Lid,
    count: u32,
    deliver: PortNum,
    /// Its place in the d-mod-k order (hosts first, then switches).
    index: usize,
}

impl Destination {
    fn lids(&self) -> impl Iterator<Item = Lid> + '_ {
        (0..self.count as u16).map(|k| self.base.offset(k))
    }
}

/// The up digits LID `offset` of a port takes: the port's own digits
/// (d-mod-k, so base LIDs alone spread like ftree's) plus the offset's,
/// digit by digit. For one destination the offsets thus reach every
/// up-path once (the paper's 2^LMC paths), only in another order than
/// the paper's numbering.
fn lid_digits(tree: &GenFatTree, base: &[usize], offset: usize) -> Vec<usize> {
    let extra = tree.digits(offset % tree.paths().max(1));
    base.iter()
        .zip(&extra)
        .zip(&tree.radix)
        .map(|((&b, &e), &r)| (b + e) % r.max(1))
        .collect()
}

/// Up*/down* distances towards one destination switch: `down[s]` on
/// down-cables only, `best[s]` the shortest up-then-down path. A switch
/// goes down where that is shortest, up otherwise, to a parent on a
/// shortest path: in a damaged tree the fewest extra hops there are.
///
/// Some switches have no up*/down* path to a LID (a middle switch of an
/// m-port n-tree reaches only the roots of its replica, and those reach
/// down to one middle switch per pod; a top switch reaches no other top
/// switch). With a second VL, one that lies above a switch whose route
/// climbs all the way (`climbs`) goes down towards the nearest such
/// switch (`turn`): its hosts' packets go there on VL 1 and climb. One
/// without hosts and without such a descent takes a shortest path, on to
/// the first switch that has an up*/down* one: only its own packets
/// (management traffic, mostly SMPs on VL15, which has no credits to
/// wait for) take it, as no route passes a switch without a path. So do
/// switch LIDs (management traffic only). A host LID gets no entry on a
/// switch with hosts and neither path: their data would turn up after
/// down on VL 0 and could close a credit loop.
struct UpDownDistances {
    down: Vec<u32>,
    best: Vec<u32>,
    /// Whether the switch's up*/down* route goes up all the way, whichever
    /// candidate a LID takes (the destination switch itself too).
    climbs: Vec<bool>,
    /// For switches without an up*/down* path: down-hops to the nearest
    /// switch whose route climbs (0 for those themselves; FAR where
    /// there is none, for the rest, and without a second VL).
    turn: Vec<u32>,
    queue: std::collections::VecDeque<SwitchId>,
}

const FAR: u32 = u32::MAX / 2;

impl UpDownDistances {
    fn new(n: usize) -> Self {
        UpDownDistances {
            down: vec![FAR; n],
            best: vec![FAR; n],
            climbs: vec![false; n],
            turn: vec![FAR; n],
            queue: Default::default(),
        }
    }

    fn compute(&mut self, tree: &GenFatTree, t: SwitchId, second_vl: bool) {
        self.down.fill(FAR);
        self.down[t.idx()] = 0;
        self.queue.push_back(t);
        while let Some(s) = self.queue.pop_front() {
            for c in &tree.up[s.idx()] {
                if self.down[c.to.idx()] == FAR {
                    self.down[c.to.idx()] = self.down[s.idx()] + 1;
                    self.queue.push_back(c.to);
                }
            }
        }
        for &s in &tree.top_down {
            let via_up = tree.up[s.idx()]
                .iter()
                .map(|c| self.best[c.to.idx()] + 1)
                .min()
                .unwrap_or(FAR);
            self.best[s.idx()] = self.down[s.idx()].min(via_up);
        }
        // Parents come before their children top-down, so a switch's
        // candidates are settled when it is.
        for &s in &tree.top_down {
            let best = self.best[s.idx()];
            self.climbs[s.idx()] = s == t
                || (best < FAR
                    && self.down[s.idx()] != best
                    && tree.up[s.idx()]
                        .iter()
                        .filter(|c| self.best[c.to.idx()] + 1 == best)
                        .all(|c| self.climbs[c.to.idx()]));
        }
        // Children before parents.
        for &s in tree.top_down.iter().rev() {
            self.turn[s.idx()] = if !second_vl {
                FAR
            } else if self.best[s.idx()] < FAR {
                if self.climbs[s.idx()] {
                    0
                } else {
                    FAR
                }
            } else {
                tree.down[s.idx()]
                    .iter()
                    .map(|c| self.turn[c.to.idx()] + 1)
                    .min()
                    .unwrap_or(FAR)
                    .min(FAR)
            };
        }
    }

    /// How `s` forwards towards switch `t`, whatever the LID: the LID's
    /// up digits only pick among the candidates.
    fn plan(
        &self,
        fabric: &Fabric,
        tree: &GenFatTree,
        (s, t): (SwitchId, SwitchId),
        plan: &mut Plan,
    ) {
        let (best, down) = (self.best[s.idx()], self.down[s.idx()]);
        let h = tree.height[s.idx()];
        plan.ports.clear();
        plan.switch_lid_ports.clear();
        (
            plan.digit_at,
            plan.divisor,
            plan.only_switch_lids,
            plan.descends_on_vl1,
        ) = (h, 1, false, false);
        if best >= FAR {
            let g = fabric.graph();
            let d = u32::from(g.dist(s, t));
            let shortest = g
                .cables(s)
                .iter()
                .filter(|c| u32::from(g.dist(c.to, t)) + 1 == d)
                .map(|c| c.port);
            let turn = self.turn[s.idx()];
            if turn < FAR {
                // Host LIDs down towards the nearest switch whose route
                // climbs, spread by the digit below as the down-cables of
                // up*/down* are; switch LIDs as without a second VL.
                plan.switch_lid_ports.extend(shortest);
                plan.digit_at = h.wrapping_sub(1);
                plan.descends_on_vl1 = true;
                plan.ports.extend(
                    tree.down[s.idx()]
                        .iter()
                        .filter(|c| self.turn[c.to.idx()] + 1 == turn)
                        .map(|c| c.port),
                );
            } else {
                plan.only_switch_lids = g.hosts(s) > 0;
                plan.ports.extend(shortest);
            }
        } else if down == best {
            // Parallel cables down are spread by the rank the up digit
            // below gave (the cable within a bundle), other choices by
            // the whole digit.
            let cands = || {
                tree.down[s.idx()]
                    .iter()
                    .filter(|c| self.down[c.to.idx()] + 1 == down)
            };
            let first = cands().next().map(|c| c.to);
            plan.digit_at = h.wrapping_sub(1);
            if cands().all(|c| Some(c.to) == first) {
                plan.divisor = tree
                    .parents
                    .get(h.wrapping_sub(1))
                    .copied()
                    .unwrap_or(1)
                    .max(1);
            }
            plan.ports.extend(cands().map(|c| c.port));
        } else {
            plan.ports.extend(
                tree.up[s.idx()]
                    .iter()
                    .filter(|c| self.best[c.to.idx()] + 1 == best)
                    .map(|c| c.port),
            );
        }
    }
}

/// A switch's way towards one destination switch (see `plan`).
#[derive(Clone, Debug, Default)]
struct Plan {
    ports: Vec<PortNum>,
    /// The height whose up digit picks the port, and what divides it first.
    digit_at: usize,
    divisor: usize,
    /// No up*/down* path: only switch LIDs take a shortest path.
    only_switch_lids: bool,
    /// No up*/down* path: host LIDs go down towards a switch whose route
    /// climbs (the packets of this switch's hosts on VL 1), switch LIDs
    /// take `switch_lid_ports` (a shortest path, as without a second VL).
    descends_on_vl1: bool,
    switch_lid_ports: Vec<PortNum>,
}

impl Plan {
    fn port(&self, choice: &[usize], to_switch: bool) -> PortNum {
        let ports = if to_switch && self.descends_on_vl1 {
            &self.switch_lid_ports
        } else {
            &self.ports
        };
        if ports.is_empty() || (self.only_switch_lids && !to_switch) {
            return NO_PATH;
        }
        let digit = choice.get(self.digit_at).copied().unwrap_or(0) / self.divisor.max(1);
        ports[digit % ports.len()]
    }
}

/// The DLID a source host should use for each destination host (§4.2):
/// (source base LID, destination base LID, DLID), for every ordered pair
/// of host ports.
pub fn path_selection(fabric: &Fabric) -> Result<DlidChoice, Error> {
    Ok(choice_of(fabric, &tree_of(fabric)?))
}

/// §4.2 generalised: a source takes the up-path its own d-mod-k digits
/// name (so the sources of a subtree, whose low digits differ, leave it on
/// disjoint up-paths as the paper's rank within the group does), and the
/// DLID is the offset whose digits added to the destination's give them.
fn choice_of(fabric: &Fabric, tree: &GenFatTree) -> DlidChoice {
    let hosts: Vec<(PortRef, Lid, u32, usize)> = fabric
        .end_ports()
        .filter_map(|(at, p)| {
            tree.host_index
                .get(&at)
                .map(|&i| (at, p.lid, p.lid_count(), i))
        })
        .collect();
    let digits: Vec<Vec<usize>> = hosts.iter().map(|h| tree.digits(h.3)).collect();
    let mut out = DlidChoice::new();
    for (i, &(src, slid, _, _)) in hosts.iter().enumerate() {
        for (j, &(dst, dbase, count, _)) in hosts.iter().enumerate() {
            if src.node != dst.node {
                // With fewer LIDs than up-paths, only the heights whose
                // digits the offsets cover whole follow the source; the
                // others keep the destination's (d-mod-k), rather than a
                // blend that is neither.
                let mut span = 1usize;
                let offset: Vec<usize> = digits[i]
                    .iter()
                    .zip(&digits[j])
                    .zip(&tree.radix)
                    .map(|((&s, &d), &r)| {
                        let r = r.max(1);
                        span = span.saturating_mul(r);
                        if span <= count as usize {
                            (s + r - d) % r
                        } else {
                            0
                        }
                    })
                    .collect();
                let offset = tree.compose(&offset) % count as usize;
                out.insert(slid, dbase, dbase.offset(offset as u16));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::report::analyze;
    use crate::gen::{self, fattree::fattree};
    use crate::routing::walk::trace;

    fn tree_fabric(m: usize, n: usize, lmc: u8) -> Fabric {
        let mut b = gen::shuffle_ports(&fattree(m, n).unwrap(), 9);
        b.assign_lids_sequential(lmc).unwrap();
        b.set_lmc(lmc);
        b.build().unwrap()
    }

    #[test]
    fn full_lmc_routes_are_up_down_and_loop_free() {
        for (m, n, lmc) in [(4, 3, 2), (8, 3, 4), (4, 4, 3), (8, 2, 2)] {
            let f = tree_fabric(m, n, lmc);
            let r = route(&f, &MlidOptions::default()).unwrap();
            let report = analyze(&f, &r);
            assert!(report.delivered(), "FT({m},{n}): {:?}", report.failures);
            assert!(report.credit_loop.is_none(), "FT({m},{n})");
            assert!(
                report.max_hops() <= 2 * (n - 1),
                "FT({m},{n}): {} hops",
                report.max_hops()
            );
            assert_eq!(r.vls_needed(), 1);
        }
    }

    /// §4.2 with full LMC: the hosts of a source group reach one
    /// destination over disjoint paths (Fig. 11).
    #[test]
    fn a_groups_sources_take_disjoint_paths_to_one_host() {
        let f = tree_fabric(8, 3, 4);
        // The paper's labels, to name the hosts as Fig. 11 does.
        let tree = crate::topology::fattree::recognize(&f).unwrap();
        let choice = path_selection(&f).unwrap();
        let port_of = |label: &[usize]| {
            let (&node, _) = tree
                .host_label
                .iter()
                .find(|(_, l)| l.as_slice() == label)
                .unwrap();
            (PortRef::new(node, 1), f.node(node).port(1).unwrap().lid)
        };
        let r = route(&f, &MlidOptions::default()).unwrap();
        let (_, dlid_base) = port_of(&[5, 2, 1]);
        let mut used = std::collections::HashSet::new();
        let mut offsets = std::collections::HashSet::new();
        for a in 0..4 {
            for b in 0..4 {
                let (src, slid) = port_of(&[1, a, b]);
                let dlid = choice.get(slid, dlid_base).unwrap();
                // Each source of the group its own LID of the destination.
                assert!(offsets.insert(dlid.raw() - dlid_base.raw()));
                let hops = trace(&f, &r.lfts, src, dlid).unwrap();
                assert_eq!(hops.len(), 5, "up to a root and down");
                // Up from the leaf, up from level 1, down from the root:
                // no two sources share a link (down from level 1 they
                // must: the destination leaf has only 4 uplinks).
                for h in &hops[..3] {
                    assert!(
                        used.insert((h.switch, h.out_port)),
                        "two sources share a link"
                    );
                }
            }
        }
    }

    #[test]
    fn lmc_plan_needs_and_fits() {
        let t = recognize(&tree_fabric(4, 3, 0)).unwrap();
        assert_eq!(
            LmcPlan::new(&t, 20, 0xBFFF),
            LmcPlan {
                needed: 2,
                target: 2,
                max_lid: 0xBFFF
            }
        );
        let big = recognize(&tree_fabric(16, 3, 0)).unwrap();
        let plan = LmcPlan::new(&big, 320, 0xBFFF);
        assert_eq!((plan.needed, plan.target), (6, 5));
        assert!(plan
            .limit_note(&big)
            .unwrap()
            .contains("LMC 5 is the largest that fits"));
        // ibsim's switches hold 30,720 LIDs: 1,344 ports × 32 may not fit.
        assert_eq!(LmcPlan::new(&big, 320, 30720).target, 4);
    }

    #[test]
    fn fewer_lids_still_deliver_without_loops() {
        let f = tree_fabric(8, 3, 1);
        let r = route(&f, &MlidOptions::default()).unwrap();
        let report = analyze(&f, &r);
        assert!(report.delivered() && report.credit_loop.is_none());
        assert_eq!(lmc_to_request(&f).unwrap(), Some(4));
        // A leaf-spine with 4 spines x 2 cables: 8 up-paths, lmc 3.
        let ls = gen::pgft::pgft(&gen::pgft::Pgft::leaf_spine(6, 8, 4, 2)).unwrap();
        let f = with_lids(ls, 1);
        let report = analyze(&f, &route(&f, &MlidOptions::default()).unwrap());
        assert!(report.delivered() && report.credit_loop.is_none());
        assert_eq!(lmc_to_request(&f).unwrap(), Some(3));
    }

    #[test]
    fn declines_what_is_not_a_tree() {
        let mut b = gen::hyperx::hyperx(&[3, 3], &[1, 1], 1).unwrap();
        b.assign_lids_sequential(0).unwrap();
        let e = route(&b.build().unwrap(), &MlidOptions::default()).unwrap_err();
        assert_eq!(e.decline(), Some(Decline::NotItsTopology), "{e}");
        let e = e.to_string();
        assert!(e.contains("the fabric is not a fat tree"), "{e}");
        assert!(
            !e.contains("updn"),
            "no fallback advice needed at lmc 0: {e}"
        );
        // With LMC > 0 the decline names the fallback that can route it.
        let mut b = gen::hyperx::hyperx(&[3, 3], &[1, 1], 1).unwrap();
        b.assign_lids_sequential(2).unwrap();
        let e = route(&b.build().unwrap(), &MlidOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`routing_engine mlid,updn`") && e.contains("ftree refuses LMC > 0"),
            "{e}"
        );
    }

    fn with_lids(b: crate::fabric::FabricBuilder, lmc: u8) -> Fabric {
        let mut b = b;
        b.assign_lids_sequential(lmc).unwrap();
        b.set_lmc(lmc);
        b.build().unwrap()
    }

    /// Every LID of every switch and of every host on a leaf (the
    /// generator's level 1) has an entry on every switch but those with
    /// hosts above the leaves; every host route arrives but between hosts
    /// on two such switches (those the recognition takes for switches
    /// above the leaves reach each other on VL 1, see
    /// `hosts_on_two_top_switches_reach_each_other_down_then_up_on_vl_1`;
    /// one with a leaf's share of hosts is taken for a leaf, and two such
    /// may have no path); no credit loops, a second VL only with SL 1.
    fn assert_routes_everything(f: &Fabric, what: &str) -> crate::analysis::report::Report {
        let r = route(f, &MlidOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
        let leaf = |s: SwitchId| f.switch_node(s).desc.starts_with("pgft-l1-");
        let on_leaf = |lid: Lid| f.lid_switch(lid).is_some_and(leaf);
        for (lid, owner) in f.lids() {
            let to_switch = f.node(owner.node).is_switch();
            if !to_switch && !on_leaf(lid) {
                continue;
            }
            for (s, lft) in r.lfts.iter().enumerate() {
                let s = SwitchId::new(s);
                let hosts_above = !leaf(s) && f.graph().hosts(s) > 0 && !to_switch;
                let here = hosts_above || f.lid_switch(lid) == Some(s);
                assert!(
                    here || lft.get(lid) != NO_PATH,
                    "{what}: LID {lid:?} ({owner:?}) unrouted at switch {s:?}"
                );
            }
        }
        for src in f
            .end_ports()
            .filter(|(at, _)| !f.node(at.node).is_switch())
            .map(|(at, _)| at)
        {
            let src_lid = f.port(src).unwrap().lid;
            for (dlid, dst) in f.ca_lids() {
                if dst.node == src.node || (!on_leaf(src_lid) && !on_leaf(dlid)) {
                    continue;
                }
                assert!(
                    trace(f, &r.lfts, src, dlid).is_ok(),
                    "{what}: {src:?} -> {dlid:?} not delivered"
                );
            }
        }
        let report = analyze(f, &r);
        assert!(report.credit_loop.is_none(), "{what}: credit loop");
        let sl1 = r.path_sl.sls_used() == [0, VL1_SL];
        assert_eq!(
            r.vls_needed() == 2,
            sl1,
            "{what}: VL 1 without SL 1 or back"
        );
        assert!(r.vls_needed() <= 2);
        report
    }

    #[test]
    fn pgfts_with_parallel_cables_cut_cables_and_top_hosts_route_up_down() {
        use crate::gen::pgft::{pgft_with_top_hosts, Pgft};
        let p3 = Pgft {
            down: vec![4, 4, 3],
            up: vec![1, 2, 2],
            parallel: vec![1, 2, 1],
        };
        let ls = Pgft::leaf_spine(6, 8, 4, 2);
        for (name, p, top_hosts, cut) in [
            ("p3", &p3, 0, 0.0),
            ("p3+top", &p3, 3, 0.0),
            ("p3 cut", &p3, 0, 0.1),
            ("ls", &ls, 2, 0.0),
            ("ls cut", &ls, 1, 0.15),
        ] {
            for seed in 1..4 {
                let mut b =
                    gen::shuffle_ports(&pgft_with_top_hosts(p, top_hosts, seed).unwrap(), seed);
                gen::degrade::drop_links(&mut b, cut, seed).unwrap();
                if !gen::degrade::switches_connected(&b) {
                    continue;
                }
                let f = with_lids(b, 2);
                let report = assert_routes_everything(&f, &format!("{name} seed {seed}"));
                // Undamaged: no path longer than up to the top and down.
                if cut == 0.0 {
                    assert!(
                        report.max_hops() <= 2 * (p.levels() - 1),
                        "{name}: {} hops",
                        report.max_hops()
                    );
                }
            }
        }
    }

    /// The fewest extra hops: every route is as short as the shortest
    /// up*/down* path the damaged tree still has (checked against a
    /// breadth-first search over (switch, still going up) states).
    #[test]
    fn damaged_trees_route_on_the_shortest_up_down_paths() {
        let mut b = fattree(8, 3).unwrap();
        gen::degrade::drop_links(&mut b, 0.1, 4).unwrap();
        let f = with_lids(b, 1);
        let tree = tree_of(&f).unwrap();
        let r = route(&f, &MlidOptions::default()).unwrap();
        let g = f.graph();
        let shortest = |from: SwitchId, to: SwitchId| -> Option<usize> {
            let mut seen = std::collections::HashSet::new();
            let mut q = std::collections::VecDeque::from([(from, true, 0usize)]);
            while let Some((s, up, d)) = q.pop_front() {
                if s == to {
                    return Some(d);
                }
                if !seen.insert((s, up)) {
                    continue;
                }
                for c in &tree.up[s.idx()] {
                    if up {
                        q.push_back((c.to, true, d + 1));
                    }
                }
                for c in &tree.down[s.idx()] {
                    q.push_back((c.to, false, d + 1));
                }
            }
            None
        };
        let hosts: Vec<PortRef> = f
            .end_ports()
            .filter(|(at, _)| !f.node(at.node).is_switch())
            .map(|(at, _)| at)
            .collect();
        for &src in hosts.iter().step_by(3) {
            for &dst in hosts.iter().step_by(5) {
                if src.node == dst.node {
                    continue;
                }
                let leaf = |p: PortRef| {
                    f.switch_id(f.port(p).unwrap().remote.unwrap().node)
                        .unwrap()
                };
                let want = shortest(leaf(src), leaf(dst)).unwrap();
                for lid in f.port(dst).unwrap().lids() {
                    let hops = trace(&f, &r.lfts, src, lid).unwrap();
                    assert_eq!(hops.len() - 1, want, "{src:?} -> {lid:?}");
                }
            }
        }
        assert!(g.switch_count() > 0);
    }

    /// Base LIDs alone spread like d-mod-k: on FT(8,3) at lmc 4 the EBB
    /// over base LIDs is at least 0.95 × ftree's (0.759 measured under
    /// OpenSM, .ci/bench-mlid; mlid's base LIDs gave 0.165 before), and
    /// the path selection does not lose against the base LIDs.
    #[test]
    fn base_lids_alone_spread_like_d_mod_k() {
        use crate::analysis::ebb::{effective_bisection, effective_bisection_with_progress};
        let f = tree_fabric(8, 3, 4);
        let r = route(&f, &MlidOptions::default()).unwrap();
        let base = effective_bisection(&f, &r, 300, 1);
        assert!(base >= 0.95 * 0.759, "base-LID EBB {base}");
        let choice = path_selection(&f).unwrap();
        let chosen = effective_bisection_with_progress(
            &f,
            &r,
            300,
            1,
            &|s, d| choice.get(s, d).unwrap_or(d),
            &|_, _| {},
        );
        assert!(
            chosen >= 0.95 * 0.759 && chosen >= base,
            "EBB with the choice {chosen}, base {base}"
        );
    }

    /// §4.2 generalised on a PGFT with parallel cables: the hosts of one
    /// leaf reach a host under another top switch over distinct up-cables
    /// (as many as the leaf has).
    #[test]
    fn a_leafs_sources_take_distinct_up_cables_on_a_pgft() {
        use crate::gen::pgft::{pgft, Pgft};
        let p = Pgft {
            down: vec![4, 4, 3],
            up: vec![1, 2, 2],
            parallel: vec![1, 2, 1],
        };
        let f = with_lids(gen::shuffle_ports(&pgft(&p).unwrap(), 2), 3);
        let tree = tree_of(&f).unwrap();
        let r = route(&f, &MlidOptions::default()).unwrap();
        let choice = path_selection(&f).unwrap();
        let leaf = |at: PortRef| {
            f.switch_id(f.port(at).unwrap().remote.unwrap().node)
                .unwrap()
        };
        let hosts: Vec<(PortRef, Lid)> = f
            .end_ports()
            .filter(|(at, _)| tree.host_index.contains_key(at))
            .map(|(at, p)| (at, p.lid))
            .collect();
        let (_, dbase) = hosts
            .iter()
            .copied()
            .max_by_key(|(at, _)| tree.host_index[at])
            .unwrap();
        let first_leaf = leaf(
            hosts
                .iter()
                .find(|(at, _)| tree.host_index[at] == 0)
                .unwrap()
                .0,
        );
        let mut used = std::collections::HashSet::new();
        for &(src, slid) in hosts.iter().filter(|(at, _)| leaf(*at) == first_leaf) {
            let dlid = choice.get(slid, dbase).unwrap();
            let hops = trace(&f, &r.lfts, src, dlid).unwrap();
            assert!(
                used.insert((hops[0].switch, hops[0].out_port)),
                "two sources share an up-cable"
            );
        }
        assert_eq!(used.len(), 4);
    }

    /// The host switches above the leaves of `f`, one entry per switch.
    fn switches_above_with_hosts(f: &Fabric, tree: &GenFatTree) -> Vec<SwitchId> {
        f.graph()
            .ids()
            .filter(|&s| tree.height[s.idx()] > 0 && f.graph().hosts(s) > 0)
            .collect()
    }

    /// Generated PGFTs and leaf–spines with hosts on at least two
    /// different top switches (seeds that give fewer are skipped, but
    /// each shape must give some).
    fn trees_with_hosts_on_two_tops(budget: crate::fabric::VlBudget) -> Vec<(String, Fabric)> {
        use crate::gen::pgft::{pgft_with_top_hosts, Pgft};
        let p3 = Pgft {
            down: vec![4, 4, 3],
            up: vec![1, 2, 2],
            parallel: vec![1, 2, 1],
        };
        let ls = Pgft::leaf_spine(6, 8, 4, 2);
        let ft = Pgft {
            down: vec![2, 2, 4],
            up: vec![1, 2, 2],
            parallel: vec![1, 1, 1],
        };
        let mut out = Vec::new();
        for (name, p, top_hosts) in [
            ("p3", &p3, 3),
            ("leaf-spine", &ls, 3),
            ("FT(4,3)-like", &ft, 3),
        ] {
            let before = out.len();
            for seed in 1..9 {
                let mut b =
                    gen::shuffle_ports(&pgft_with_top_hosts(p, top_hosts, seed).unwrap(), seed);
                b.set_vl_budget(budget.clone());
                let f = with_lids(b, 2);
                let tree = tree_of(&f).unwrap();
                let tops = switches_above_with_hosts(&f, &tree);
                // Every switch with hosts that the generator put on top
                // must be recognised there (one with as large a host share
                // as a leaf is taken for a leaf: another case).
                let leaves = f
                    .graph()
                    .ids()
                    .filter(|&s| f.switch_node(s).desc.starts_with("pgft-l1-"))
                    .count();
                let at_height_0 = f
                    .graph()
                    .ids()
                    .filter(|&s| tree.height[s.idx()] == 0)
                    .count();
                let distinct_tops = tops
                    .iter()
                    .filter(|&&s| tree.height[s.idx()] == tree.top)
                    .count();
                if distinct_tops >= 2 && at_height_0 == leaves {
                    out.push((format!("{name} seed {seed}"), f));
                }
            }
            assert!(
                out.len() > before,
                "{name}: no seed put hosts on two top switches"
            );
        }
        out
    }

    /// The heights a route passes, switch by switch.
    fn heights_along(
        f: &Fabric,
        tree: &GenFatTree,
        r: &Routing,
        src: PortRef,
        dlid: Lid,
    ) -> Vec<usize> {
        let hops =
            trace(f, &r.lfts, src, dlid).unwrap_or_else(|e| panic!("{src:?} -> {dlid:?}: {e:?}"));
        hops.iter().map(|h| tree.height[h.switch.idx()]).collect()
    }

    /// Whether `heights` first only rises, then only falls (up*/down*),
    /// or, with `valley`, first only falls, then only rises.
    fn one_turn(heights: &[usize], valley: bool) -> bool {
        let turn = heights
            .windows(2)
            .position(|w| if valley { w[1] > w[0] } else { w[1] < w[0] });
        let rest = turn.map_or(&heights[..0], |i| &heights[i..]);
        rest.windows(2)
            .all(|w| if valley { w[1] > w[0] } else { w[1] < w[0] })
    }

    /// Hosts on two different top switches have no up*/down* path: they
    /// go down from their top switch to the nearest switch that climbs to
    /// the other, then up, on SL 1 / VL 1; every other pair stays
    /// up*/down* on SL 0 / VL 0. Every pair arrives, and the credit-loop
    /// analysis with the path SLs and SL2VL tables finds no loop, while
    /// the same tables with every path on VL 0 do have one: the second
    /// VL is what keeps them loop-free.
    #[test]
    fn hosts_on_two_top_switches_reach_each_other_down_then_up_on_vl_1() {
        let mut flat_loops = 0;
        let trees = trees_with_hosts_on_two_tops(crate::fabric::VlBudget::default());
        for (what, f) in &trees {
            let tree = tree_of(f).unwrap();
            let r = route(f, &MlidOptions::default()).unwrap();
            let report = analyze(f, &r);
            assert!(report.delivered(), "{what}: {:?}", report.failures);
            assert!(
                report.credit_loop.is_none(),
                "{what}: credit loop with the VLs"
            );
            assert_eq!(
                (
                    r.vls_needed(),
                    report.sls_used.clone(),
                    report.vls_used.clone()
                ),
                (2, vec![0, 1], vec![0, 1]),
                "{what}"
            );
            let sl2vl = r.sl2vl.as_ref().unwrap();
            let g = f.graph();
            for s in g.ids() {
                for (i, o) in (0..g.port_slots(s) as u8)
                    .flat_map(|i| (0..g.port_slots(s) as u8).map(move |o| (i, o)))
                {
                    let t = sl2vl.switch_table(s, PortNum::new(i), PortNum::new(o));
                    assert_eq!(
                        (t[0], t[1]),
                        (0, 1),
                        "{what}: SL 0 -> VL 0, SL 1 -> VL 1 everywhere"
                    );
                }
            }
            let tops = switches_above_with_hosts(f, &tree);
            let switch_of = |at: PortRef| {
                f.switch_id(f.port(at).unwrap().remote.unwrap().node)
                    .unwrap()
            };
            let hosts: Vec<PortRef> = f
                .end_ports()
                .filter(|(at, _)| !f.node(at.node).is_switch())
                .map(|(at, _)| at)
                .collect();
            let mut valleys = 0;
            for &src in &hosts {
                let slid = f.port(src).unwrap().lid;
                for &dst in &hosts {
                    if src.node == dst.node {
                        continue;
                    }
                    let (a, b) = (switch_of(src), switch_of(dst));
                    let across_tops = a != b && tops.contains(&a) && tops.contains(&b);
                    for dlid in f.port(dst).unwrap().lids() {
                        let sl = r.path_sl.sl(slid, dlid);
                        let heights = heights_along(f, &tree, &r, src, dlid);
                        assert_eq!(
                            sl == VL1_SL,
                            across_tops,
                            "{what}: {src:?} -> {dlid:?} on SL {sl}"
                        );
                        if across_tops {
                            assert!(
                                one_turn(&heights, true),
                                "{what}: {src:?} -> {dlid:?} not down, then up: {heights:?}"
                            );
                            valleys += 1;
                        } else {
                            assert!(
                                one_turn(&heights, false),
                                "{what}: {src:?} -> {dlid:?} not up*/down*: {heights:?}"
                            );
                        }
                    }
                }
            }
            assert!(valleys > 0, "{what}");
            // The same tables on VL 0 alone.
            let flat = Routing {
                sl2vl: None,
                path_sl: PathSl::Uniform(0),
                ..r.clone()
            };
            let flat_report = analyze(f, &flat);
            flat_loops += usize::from(flat_report.credit_loop.is_some());
        }
        // On one VL the valleys close credit loops (not necessarily on
        // every small tree, so counted over all of them).
        assert!(
            flat_loops > 0,
            "no tree has a credit loop on one VL: the test would not catch a missing VL"
        );
    }

    /// With one VL (or qos off) mlid keeps up*/down* for everything and
    /// leaves the pairs between top switches unrouted: they and only they
    /// fail, nothing has a credit loop, and no SL2VL is asked for.
    #[test]
    fn with_one_vl_pairs_between_top_switches_stay_unrouted() {
        use crate::fabric::VlBudget;
        let one = VlBudget {
            data_vls: 1,
            limited_by: "the test offers 1".into(),
            ..VlBudget::default()
        };
        let no_qos = VlBudget {
            sl2vl_programmed: false,
            ..VlBudget::default()
        };
        for budget in [one, no_qos] {
            for (what, f) in trees_with_hosts_on_two_tops(budget.clone()) {
                let tree = tree_of(&f).unwrap();
                let r = route(&f, &MlidOptions::default()).unwrap();
                assert!(
                    r.sl2vl.is_none() && r.path_sl == PathSl::Uniform(0),
                    "{what}"
                );
                let report = analyze(&f, &r);
                assert!(report.credit_loop.is_none(), "{what}");
                let tops = switches_above_with_hosts(&f, &tree);
                let switch_of = |at: PortRef| {
                    f.switch_id(f.port(at).unwrap().remote.unwrap().node)
                        .unwrap()
                };
                let hosts: Vec<PortRef> = f
                    .end_ports()
                    .filter(|(at, _)| !f.node(at.node).is_switch())
                    .map(|(at, _)| at)
                    .collect();
                for &src in &hosts {
                    for &dst in &hosts {
                        let (a, b) = (switch_of(src), switch_of(dst));
                        let across_tops = a != b && tops.contains(&a) && tops.contains(&b);
                        let arrives = trace(&f, &r.lfts, src, f.port(dst).unwrap().lid).is_ok();
                        assert_eq!(
                            arrives,
                            !across_tops || src.node == dst.node,
                            "{what} {budget:?}: {src:?} -> {dst:?}"
                        );
                    }
                }
            }
        }
    }
}
