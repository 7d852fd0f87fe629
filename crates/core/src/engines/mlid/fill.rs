//! The LFT fill: every LID of every end port, on every switch.

use super::balance::{all_candidates, Balance, Candidates, ALL_UP};
use super::repair::{needs_repair, spread_busiest, HostLids, RepairNeed};
use super::vl1::{vl1_tables, VL1_SL};
use super::{LmcPlan, MlidOptions, NAME};
use crate::deadlock::virtual_layers::make_deadlock_free;
use crate::error::Error;
use crate::fabric::{Bfs, Cable, Fabric, Lid, PortNum, SwitchGraph, SwitchId};
use crate::routing::{Lft, PathSl, Routing, SwitchSls, NO_PATH};
use crate::topology::gft::GenFatTree;

/// Per host port (base LID): the place of its base LID's root among the
/// roots, in the order its other LIDs turn over them; and the number of
/// roots in that order.
pub(super) struct BasePlaces {
    pub(super) places: Vec<(Lid, usize)>,
    pub(super) roots: usize,
    /// Whether the extra LIDs were placed for the rank rule.
    pub(super) by_rank: bool,
}

pub(super) fn route_tree(
    fabric: &Fabric,
    tree: &GenFatTree,
    options: &MlidOptions,
) -> Result<(Routing, BasePlaces), Error> {
    log_lmc_plan(fabric, tree);
    let at_switch = destinations_by_switch(fabric, tree);
    let need = needs_repair(fabric, tree);
    let mut filled = fill(fabric, tree, &at_switch, need.is_some());
    // Layered routings keep the fill's paths: their layers are placed
    // for them.
    if let Some(need) = need.filter(|_| filled.detoured.is_empty()) {
        let ports = host_lids(&at_switch);
        let lids: usize = ports.iter().map(|p| usize::from(p.count)).sum();
        let done = spread_busiest(
            fabric,
            tree,
            &ports,
            &mut filled.lfts,
            &filled.route_loads,
            (4 * lids, filled.sls.is_none()),
        );
        let why = match need {
            RepairNeed::Damaged => "damaged tree",
            RepairNeed::Crowded => "more LIDs into a switch than cables from above",
        };
        log::info!(
            "{NAME}: {why}: {} entries moved, busiest cable {} -> {} routes",
            done.moves,
            done.busiest_before,
            done.busiest_after
        );
    }
    finish(fabric, tree, options, filled)
}

/// The host ports' LIDs (not switches': management traffic only), for
/// the repair of damaged and crowded trees.
fn host_lids(at_switch: &[Vec<Destination>]) -> Vec<HostLids> {
    at_switch
        .iter()
        .enumerate()
        .flat_map(|(s, ds)| {
            ds.iter()
                .filter(|d| !d.deliver.is_management())
                .map(move |d| HostLids {
                    base: d.base,
                    count: d.count as u16,
                    at: SwitchId::new(s),
                })
        })
        .collect()
}

/// Says what the LMC gives of the tree's up-paths, and which LMC to set.
fn log_lmc_plan(fabric: &Fabric, tree: &GenFatTree) {
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
}

/// Every end port's LIDs, by the switch that delivers them, in the tree's
/// host order (then the switch's own LID).
fn destinations_by_switch(fabric: &Fabric, tree: &GenFatTree) -> Vec<Vec<Destination>> {
    let graph = fabric.graph();
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
    // A switch's ports in the tree's host order (then its own LID): the
    // order the counters see them in, whatever the LID numbering.
    for d in &mut at_switch {
        d.sort_by_key(|d| d.index);
    }
    at_switch
}

/// What the fill leaves for `finish`.
struct Filled {
    lfts: Vec<Lft>,
    /// Ports whose LIDs were routed.
    routed: usize,
    /// (source switch with hosts, destination switch) pairs whose host
    /// LIDs take a shortest path there (no up*/down* path, no descent on
    /// VL 1), once per destination port: their paths need the layering.
    detoured: Vec<(SwitchId, SwitchId)>,
    /// The same, routed down-then-up on VL 1 (counted at base LIDs).
    on_vl1: usize,
    sls: Option<SwitchSls>,
    base_places: BasePlaces,
    /// Per channel (`SwitchGraph::channel`): the host routes leaving
    /// there, for the repair (empty unless asked for).
    route_loads: Vec<u64>,
}

/// Adds `routes` routes leaving switch `s` over `port` to `loads`, where
/// they are counted (`loads` empty: not asked for, or not host routes).
fn count_routes_on(
    loads: &mut [u64],
    graph: &SwitchGraph,
    (s, port): (SwitchId, PortNum),
    routes: u32,
) {
    if !loads.is_empty() {
        loads[graph.channel(s, port)] += u64::from(routes);
    }
}

/// The LFT entry of every switch for every LID, by the counters; with
/// `count_routes`, also the host routes on every channel (what the repair
/// starts from: reading them back from the tables cost it more than the
/// whole fill on the 36-port three-level tree).
fn fill(
    fabric: &Fabric,
    tree: &GenFatTree,
    at_switch: &[Vec<Destination>],
    count_routes: bool,
) -> Filled {
    let graph = fabric.graph();
    let mut lfts = Routing::empty_lfts(fabric);
    let mut routed = 0usize;
    let mut detoured: Vec<(SwitchId, SwitchId)> = Vec::new();
    let mut on_vl1 = 0usize;
    let second_vl = fabric.vl_budget().usable() >= 2;
    let mut sls: Option<SwitchSls> = None;
    let mut dist = UpDownDistances::new(graph.switch_count());
    let mut steps = Steps::default();
    let mut balance = Balance::new(fabric, tree);
    // Per switch: the sources whose packets to the current LID pass it.
    let mut flow = vec![0u32; graph.switch_count()];
    let hosts: Vec<u32> = graph.ids().map(|s| graph.hosts(s)).collect();
    // Per host port: its base LID's root's place (for the path selection).
    let mut base_places: Vec<(Lid, usize)> = Vec::new();
    let mut route_loads = vec![
        0u64;
        if count_routes {
            graph.channel_count()
        } else {
            0
        }
    ];
    for t in graph.ids() {
        if at_switch[t.idx()].is_empty() {
            continue;
        }
        dist.compute(fabric, tree, t, second_vl);
        steps.lay(fabric, tree, &dist);
        let serial = t.idx() as u32;
        for d in &at_switch[t.idx()] {
            routed += 1;
            let to_switch = d.deliver.is_management();
            // Host routes only: management traffic is not counted.
            let loads: &mut [u64] = if to_switch { &mut [] } else { &mut route_loads };
            if !to_switch {
                detoured.extend(steps.shortest_with_hosts.iter().map(|&s| (s, t)));
            }
            for (o, lid) in (0..d.count as usize).zip(d.lids()) {
                // Switch LIDs carry management traffic only: routed the
                // same way, not counted.
                balance.start_lid(tree, &dist.down, (t, o), !to_switch);
                if o == 0 && !to_switch {
                    base_places.push((d.base, balance.base_place()));
                }
                flow.copy_from_slice(&hosts);
                // The port's earlier LIDs, in every table.
                let earlier = d.base.idx()..d.base.idx() + o;
                for step in &steps.list {
                    let s = step.s;
                    let out = if s == t {
                        d.deliver
                    } else if let Some((port, next)) = step.only[usize::from(to_switch)] {
                        // One candidate: the chain, where it passes, takes
                        // it too (every cable down to a chain's switch is a
                        // candidate of the switch above).
                        let here = flow[s.idx()];
                        if here > 0 {
                            balance.pass(s, port, here);
                            flow[next.idx()] += here;
                            count_routes_on(loads, graph, (s, port), here);
                        }
                        port
                    } else if step.for_hosts == Listed::AllUp && balance.toward_root(s).len() == 1 {
                        // A full tree's switch with one up-cable towards
                        // the chain's root (most of them): it takes it.
                        let c = balance.toward_root(s)[0];
                        let here = flow[s.idx()];
                        if here > 0 {
                            balance.pass(s, c.port, here);
                            flow[c.to.idx()] += here;
                            count_routes_on(loads, graph, (s, c.port), here);
                        }
                        c.port
                    } else {
                        let (cables, candidates) = steps.candidates(tree, step, to_switch, serial);
                        let row = lfts[s.idx()].as_bytes();
                        let earlier = row.get(earlier.clone()).unwrap_or(&[]);
                        let here = flow[s.idx()];
                        match balance.pick(
                            earlier,
                            s,
                            (
                                cables,
                                candidates,
                                step.way,
                                step.for_hosts == Listed::AllUp,
                            ),
                            here,
                        ) {
                            Some((port, next)) => {
                                flow[next.idx()] += here;
                                count_routes_on(loads, graph, (s, port), here);
                                port
                            }
                            None => NO_PATH,
                        }
                    };
                    lfts[s.idx()].set(lid, out);
                }
                // Only hosts' packets take SL 1: a switch without hosts
                // passes VL 1 packets on, its own management packets need
                // no data VL.
                if !to_switch && !steps.descending_with_hosts.is_empty() {
                    let sls = sls.get_or_insert_with(|| SwitchSls::new(fabric));
                    for &s in &steps.descending_with_hosts {
                        sls.set(s, lid, VL1_SL);
                    }
                    if o == 0 {
                        on_vl1 += steps.descending_with_hosts.len();
                    }
                }
            }
        }
    }
    Filled {
        lfts,
        routed,
        detoured,
        on_vl1,
        sls,
        base_places: BasePlaces {
            places: base_places,
            roots: balance.roots(),
            by_rank: balance.by_rank(),
        },
        route_loads,
    }
}

/// Every switch's way towards one destination switch, in the order the
/// fill visits them: farthest from it first, so that a switch is visited
/// after every switch that forwards to it and knows how many sources pass
/// it (every up*/down* hop brings a packet one step nearer); those
/// without an up*/down* path (their packets' own) come first. Laid once
/// per destination switch, for all its LIDs.
#[derive(Default)]
struct Steps {
    list: Vec<Step>,
    /// The candidate cables of every step.
    cables: Vec<Cable>,
    /// Switches with hosts and without an up*/down* path or a descent to
    /// one (shortest paths), and those that descend on VL 1.
    shortest_with_hosts: Vec<SwitchId>,
    descending_with_hosts: Vec<SwitchId>,
    plan: Plan,
    order: Vec<SwitchId>,
    counts: Vec<usize>,
}

/// One switch's way towards the destination switch (see `Plan`).
struct Step {
    s: SwitchId,
    way: Way,
    /// The candidates for host LIDs and for switch LIDs.
    for_hosts: Listed,
    for_switches: Listed,
    /// For host and switch LIDs: the port and the switch behind it where
    /// there is just one candidate.
    only: [Option<(PortNum, SwitchId)>; 2],
}

/// Where a step's candidates are listed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listed {
    /// Every up-cable of the switch (`GenFatTree::up`), as in a full tree.
    AllUp,
    /// A range of `Steps::cables`.
    At(u32, u32),
}

impl Steps {
    // Out of line (as `compute`): profiles show the per-destination work
    // apart from the per-LID fill.
    #[inline(never)]
    fn lay(&mut self, fabric: &Fabric, tree: &GenFatTree, dist: &UpDownDistances) {
        let graph = fabric.graph();
        self.sort(graph.switch_count(), &dist.best);
        self.list.clear();
        self.cables.clear();
        self.shortest_with_hosts.clear();
        self.descending_with_hosts.clear();
        for &s in &self.order {
            let plan = &mut self.plan;
            dist.plan(fabric, tree, s, plan);
            let for_hosts = if plan.all_up {
                Listed::AllUp
            } else {
                let start = self.cables.len() as u32;
                self.cables.extend_from_slice(&plan.cables);
                Listed::At(start, self.cables.len() as u32)
            };
            let for_switches = if plan.descends_on_vl1 {
                let start = self.cables.len() as u32;
                self.cables.extend_from_slice(&plan.switch_lid_cables);
                Listed::At(start, self.cables.len() as u32)
            } else {
                for_hosts
            };
            let only = |listed| match Self::resolve(&self.cables, tree, s, listed) {
                [c] => Some((c.port, c.to)),
                _ => None,
            };
            self.list.push(Step {
                s,
                way: plan.way,
                only: [only(for_hosts), only(for_switches)],
                for_hosts,
                for_switches,
            });
            if graph.hosts(s) > 0 {
                if plan.shortest {
                    self.shortest_with_hosts.push(s);
                }
                if plan.descends_on_vl1 {
                    self.descending_with_hosts.push(s);
                }
            }
        }
    }

    fn resolve<'a>(
        cables: &'a [Cable],
        tree: &'a GenFatTree,
        s: SwitchId,
        listed: Listed,
    ) -> &'a [Cable] {
        match listed {
            Listed::AllUp => &tree.up[s.idx()],
            Listed::At(a, b) => &cables[a as usize..b as usize],
        }
    }

    /// Switch ids ordered by `(best < FAR, Reverse(best))`, ids ascending
    /// among equals (a counting sort: distances are small).
    fn sort(&mut self, n: usize, best: &[u32]) {
        let key = |s: usize| {
            if best[s] >= FAR {
                0
            } else {
                n + 1 - best[s].min(n as u32) as usize
            }
        };
        self.counts.clear();
        self.counts.resize(n + 2, 0);
        for s in 0..n {
            self.counts[key(s)] += 1;
        }
        let mut at = 0;
        for c in self.counts.iter_mut() {
            let here = *c;
            *c = at;
            at += here;
        }
        self.order.clear();
        self.order.resize(n, SwitchId::default());
        for s in 0..n {
            let k = key(s);
            self.order[self.counts[k]] = SwitchId::new(s);
            self.counts[k] += 1;
        }
    }

    /// A step's candidate cables for a host or switch LID, and their name
    /// for the balancing's memory (`serial`: the destination switch's).
    fn candidates<'a>(
        &'a self,
        tree: &'a GenFatTree,
        step: &Step,
        to_switch: bool,
        serial: u32,
    ) -> (&'a [Cable], Candidates) {
        let for_switches = to_switch && step.for_switches != step.for_hosts;
        let listed = if for_switches {
            step.for_switches
        } else {
            step.for_hosts
        };
        let name = match listed {
            Listed::AllUp => ALL_UP,
            Listed::At(..) => all_candidates(serial, for_switches),
        };
        (Self::resolve(&self.cables, tree, step.s, listed), name)
    }
}

/// The routing from the filled tables: on virtual layers where some pairs
/// took shortest paths, else on VL 0 (and VL 1 for descents).
fn finish(
    fabric: &Fabric,
    tree: &GenFatTree,
    options: &MlidOptions,
    filled: Filled,
) -> Result<(Routing, BasePlaces), Error> {
    let Filled {
        lfts,
        routed,
        detoured,
        on_vl1,
        sls,
        base_places,
        route_loads: _,
    } = filled;
    if let Some(&(s, t)) = detoured.first() {
        // Some hosts have neither an up*/down* path nor a descent to
        // one (Aggregation Nodes on line chips of two directors, hosts on
        // spines of two chassis): their shortest paths may turn from down
        // to up anywhere, so every path goes to a virtual layer where it
        // closes no credit loop (one layer when it closes none at all),
        // or mlid declines naming the VLs it lacks.
        log::info!(
            "{NAME}: {} host-switch/destination pairs have no up*/down* path (first: hosts on {} to {}): \
             they take shortest paths, and every path goes to a virtual layer free of credit loops",
            detoured.len(),
            fabric.describe_switch(s),
            fabric.describe_switch(t)
        );
        // Destinations on the leaves first: their paths are all
        // up*/down* and share the first layer; the few that turn come
        // last and take the layers left.
        let mut order: Vec<(usize, Lid)> = fabric
            .lids()
            .map(|(lid, _)| {
                let h = fabric.lid_switch(lid).map_or(0, |s| tree.height[s.idx()]);
                (h, lid)
            })
            .collect();
        order.sort();
        let order: Vec<Lid> = order.into_iter().map(|(_, lid)| lid).collect();
        let routing = make_deadlock_free(NAME, fabric, lfts, &order, &options.layering)?;
        log::info!(
            "{NAME}: {routed} ports' LIDs routed, {} VL(s)",
            routing.vls_needed()
        );
        return Ok((routing, base_places));
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
    Ok((
        Routing {
            engine: NAME.to_string(),
            lfts,
            sl2vl,
            path_sl,
        },
        base_places,
    ))
}

/// An end port whose LIDs one switch delivers.
#[derive(Clone, Debug)]
struct Destination {
    base: Lid,
    count: u32,
    deliver: PortNum,
    /// Its place in the tree's host order (hosts first, then switches).
    index: usize,
}

impl Destination {
    fn lids(&self) -> impl Iterator<Item = Lid> + '_ {
        (0..self.count as u16).map(|k| self.base.offset(k))
    }
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
    pub(super) down: Vec<u32>,
    best: Vec<u32>,
    /// Whether the switch's up*/down* route goes up all the way, whichever
    /// candidate a LID takes (the destination switch itself too).
    climbs: Vec<bool>,
    /// Whether the switch goes up and every up-cable is on a shortest
    /// up*/down* path (a full tree).
    all_up: Vec<bool>,
    /// For switches without an up*/down* path: down-hops to the nearest
    /// switch whose route climbs (0 for those themselves; FAR where
    /// there is none, for the rest, and without a second VL).
    turn: Vec<u32>,
    queue: std::collections::VecDeque<SwitchId>,
    /// Hops from `t` on any cables, searched only when some switch has no
    /// up*/down* path to it (their shortest paths): one search per such
    /// destination instead of the fabric's all-pairs table (2.6 million
    /// entries on the 36-port three-level tree, mostly never read).
    from_t: Bfs,
    searched: bool,
}

pub(super) const FAR: u32 = u32::MAX / 2;

impl UpDownDistances {
    fn new(n: usize) -> Self {
        UpDownDistances {
            down: vec![FAR; n],
            best: vec![FAR; n],
            climbs: vec![false; n],
            all_up: vec![false; n],
            turn: vec![FAR; n],
            queue: Default::default(),
            from_t: Bfs::new(n),
            searched: false,
        }
    }

    #[inline(never)]
    fn compute(&mut self, fabric: &Fabric, tree: &GenFatTree, t: SwitchId, second_vl: bool) {
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
        // Parents come before their children top-down, so a switch's
        // candidates are settled when it is: one pass over the up-cables
        // finds the best way up, how many parents lie on it and whether
        // every one of them climbs.
        for &s in &tree.top_down {
            let up = &tree.up[s.idx()];
            let (mut via_up, mut ties, mut all_climb) = (u32::MAX, 0usize, true);
            for c in up {
                let b = self.best[c.to.idx()] + 1;
                if b < via_up {
                    (via_up, ties, all_climb) = (b, 1, self.climbs[c.to.idx()]);
                } else if b == via_up {
                    ties += 1;
                    all_climb &= self.climbs[c.to.idx()];
                }
            }
            let down = self.down[s.idx()];
            let best = down.min(via_up);
            self.best[s.idx()] = best;
            let goes_up = best < FAR && down != best;
            self.climbs[s.idx()] = s == t || (goes_up && all_climb);
            self.all_up[s.idx()] = goes_up && ties == up.len();
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
        self.searched = self.best.iter().any(|&b| b >= FAR);
        if self.searched {
            self.from_t.run(fabric.graph(), t);
        }
    }

    /// Hops from `s` to the destination switch on any cables (`FAR` where
    /// there is no way, or no search was needed).
    fn hops(&self, s: SwitchId) -> u32 {
        if self.searched && self.from_t.reached(s) {
            self.from_t.dist(s)
        } else {
            FAR
        }
    }

    /// How `s` forwards towards the destination switch, whatever the LID: the
    /// candidate cables; the balancing picks one per LID.
    fn plan(&self, fabric: &Fabric, tree: &GenFatTree, s: SwitchId, plan: &mut Plan) {
        let (best, down) = (self.best[s.idx()], self.down[s.idx()]);
        plan.cables.clear();
        plan.switch_lid_cables.clear();
        (plan.way, plan.shortest, plan.descends_on_vl1, plan.all_up) =
            (Way::Other, false, false, false);
        if best >= FAR {
            let g = fabric.graph();
            let d = self.hops(s);
            let shortest = g
                .cables(s)
                .iter()
                .filter(|c| self.hops(c.to) + 1 == d)
                .copied();
            let turn = self.turn[s.idx()];
            if turn < FAR {
                // Host LIDs down towards the nearest switch whose route
                // climbs; switch LIDs as without a second VL.
                plan.switch_lid_cables.extend(shortest);
                plan.descends_on_vl1 = true;
                plan.cables.extend(
                    tree.down[s.idx()]
                        .iter()
                        .filter(|c| self.turn[c.to.idx()] + 1 == turn),
                );
            } else {
                plan.shortest = true;
                plan.cables.extend(shortest);
            }
        } else if down == best {
            plan.way = Way::Down;
            plan.cables.extend(
                tree.down[s.idx()]
                    .iter()
                    .filter(|c| self.down[c.to.idx()] + 1 == down),
            );
        } else if self.all_up[s.idx()] {
            // Every up-cable: the tree's own list, not copied.
            (plan.way, plan.all_up) = (Way::Up, true);
        } else {
            plan.way = Way::Up;
            plan.cables.extend(
                tree.up[s.idx()]
                    .iter()
                    .filter(|c| self.best[c.to.idx()] + 1 == best),
            );
        }
    }
}

/// A switch's way towards one destination switch (see `plan`).
#[derive(Clone, Debug, Default)]
pub(super) struct Plan {
    /// The cables on its shortest up*/down* paths (or the fallbacks).
    pub(super) cables: Vec<Cable>,
    pub(super) way: Way,
    /// Going up, and every up-cable is a candidate (a full tree).
    pub(super) all_up: bool,
    /// No up*/down* path and no descent to one: a shortest path (whose
    /// turns the virtual layering then makes safe).
    shortest: bool,
    /// No up*/down* path: host LIDs go down towards a switch whose route
    /// climbs (the packets of this switch's hosts on VL 1), switch LIDs
    /// take `switch_lid_cables` (a shortest path, as without a second VL).
    descends_on_vl1: bool,
    switch_lid_cables: Vec<Cable>,
}

/// Whether a plan goes down, up, or neither (descents on VL 1, shortest
/// paths), for the balancing's preferences.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Way {
    Down,
    Up,
    #[default]
    Other,
}
