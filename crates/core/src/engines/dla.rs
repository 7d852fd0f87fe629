//! `dla`: deterministic minimal routing for fully connected Dragonflies
//! (Kim & Dally), deadlock-free with one SL and two VLs by shifting to VL 1
//! on the local hop that follows a global hop (DLA paper, Figures 4 and 8).

use crate::config::{ConfigError, OptionSpec, Section};
use crate::engines::{EngineInfo, Outcome};
use crate::error::Error;
use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchGraph, SwitchId};
use crate::routing::{Lft, PathSl, Routing, Sl2Vl, ALL_VL0, NO_PATH, NUM_SLS};
use crate::topology::dragonfly::{discover_groups, groups_by_mapping, Groups, NotADragonfly};

pub const NAME: &str = "dla";

const SL: OptionSpec = OptionSpec {
    key: "sl",
    default: "0",
    help: "the SL every dla path uses (path_sl answers it; CA ports map it to VL 0)",
};
const GROUPS: OptionSpec = OptionSpec {
    key: "groups",
    default: "neighbourhood",
    help: "how dla finds groups: neighbourhood (the DLA paper's closed neighbourhoods, groups of one size) \
           or mapping (link equivalence, for Dragonflies that lost switches)",
};

/// dla's options (`dla.*` in osmroute.conf).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DlaOptions {
    /// The SL every path uses (the paper's single SL).
    pub sl: u8,
    /// How dla finds the Dragonfly's groups.
    pub groups: GroupDiscovery,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupDiscovery {
    /// The DLA paper's stage 1: cliques of closed neighbourhoods; needs
    /// groups of one size.
    Neighbourhood,
    /// Link equivalence (direct-topologies paper §2.2): also finds groups
    /// that lost switches.
    Mapping,
}

impl DlaOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        Ok(DlaOptions {
            sl: s.number(&SL, 0, 15)?,
            groups: s.choice(&GROUPS, &[("neighbourhood", GroupDiscovery::Neighbourhood), ("mapping", GroupDiscovery::Mapping)])?,
        })
    }
}

impl Default for DlaOptions {
    fn default() -> Self {
        DlaOptions { sl: 0, groups: GroupDiscovery::Neighbourhood }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "Kim & Dally minimal routing for fully connected Dragonflies; 1 SL, 2 VLs",
    needs_qos: true,
    options: &[&[SL, GROUPS]],
    build: |s| {
        let options = DlaOptions::read(s)?;
        Ok(Box::new(super::Configured { options, route: |f, o| route(f, o).map(Outcome::from) }))
    },
};

/// What a switch port is cabled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PortClass {
    Unused,
    Terminal,
    Local,
    Global,
}

pub fn route(fabric: &Fabric, options: &DlaOptions) -> Result<Routing, Error> {
    let graph = fabric.graph();
    let groups = match options.groups {
        GroupDiscovery::Neighbourhood => discover_groups(graph),
        GroupDiscovery::Mapping => groups_by_mapping(graph),
    }
    .map_err(|e| Error::declined(NAME, explain(fabric, &e)))?;
    let plan = LinkPlan::new(fabric, &groups);
    let lfts = plan.forwarding_tables(fabric)?;
    let sl2vl = plan.sl2vl_tables(fabric, options.sl);
    let sizes = groups.members.iter().map(Vec::len);
    let (smallest, largest) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
    let size = if smallest == largest { smallest.to_string() } else { format!("{smallest} to {largest}") };
    log::info!("dla: {} groups of {size} switches, {} LIDs routed", groups.members.len(), fabric.lids().count());
    Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: Some(sl2vl), path_sl: PathSl::Uniform(options.sl) })
}

fn explain(fabric: &Fabric, e: &NotADragonfly) -> String {
    let name = |s: SwitchId| fabric.describe_switch(s);
    let names = |set: &[SwitchId]| set.iter().map(|&s| name(s)).collect::<Vec<_>>().join(", ");
    let fix = "dla routes only Dragonflies whose groups are fully connected and whose groups are all \
               pairwise joined; use another engine (e.g. `routing_engine dla,minhop`) or fix the cabling";
    match e {
        NotADragonfly::Empty => "the fabric has no switches".to_string(),
        NotADragonfly::Inconsistent { switch, its_group, member, member_group } => format!(
            "not a Dragonfly with fully connected groups: {} sees group [{}] but {} sees [{}]; {fix}",
            name(*switch),
            names(its_group),
            name(*member),
            names(member_group)
        ),
        NotADragonfly::GroupSize { switch, size, expected } => format!(
            "not a fully connected Dragonfly: the group of {} has {size} switches, expected {expected} \
             (if switches are missing, `dla.groups mapping` finds the groups anyway); {fix}",
            name(*switch)
        ),
        NotADragonfly::LocalLinkMissing { a, b } => format!(
            "not a Dragonfly with fully connected groups: {} and {} are in one group but not cabled; {fix}",
            name(*a),
            name(*b)
        ),
        NotADragonfly::NotFullyConnected { a, b } => format!(
            "not a fully connected Dragonfly: no global link joins the group of {} and the group of {}; {fix}",
            name(*a),
            name(*b)
        ),
    }
}

/// A LID to route and where it is delivered (compact: the fill loop reads
/// one of these per table entry).
struct Destination {
    lid: Lid,
    /// Out-port at the destination switch.
    final_port: PortNum,
    switch: SwitchId,
    group: u32,
    /// Position among the LIDs delivered in `group`, to spread them over
    /// the global links into the group.
    rank: u32,
}

/// Which ports carry traffic between switches and groups.
struct LinkPlan<'a> {
    graph: &'a SwitchGraph,
    groups: Groups,
    /// Position of each switch within its group.
    position: Vec<usize>,
    /// Per switch, per position in its group: ports to that member.
    local_ports: Vec<Vec<Vec<PortNum>>>,
    /// Per (source group, destination group): global links as (switch in
    /// the source group, its port), in switch (GUID) and port order.
    global_links: Vec<Vec<(SwitchId, PortNum)>>,
}

impl<'a> LinkPlan<'a> {
    fn new(fabric: &'a Fabric, groups: &Groups) -> Self {
        let graph = fabric.graph();
        let g = groups.members.len();
        let mut position = vec![0; graph.switch_count()];
        for m in &groups.members {
            for (i, &s) in m.iter().enumerate() {
                position[s.idx()] = i;
            }
        }
        let mut local_ports: Vec<Vec<Vec<PortNum>>> = groups
            .of_switch
            .iter()
            .map(|&gi| vec![Vec::new(); groups.members[gi].len()])
            .collect();
        let mut global_links = vec![Vec::new(); g * g];
        // Switches in GUID order and cables in port order: OpenSM's
        // snapshot and a net file give the same tables.
        for s in graph.ids() {
            for cable in graph.cables(s) {
                let (gs, gt) = (groups.of_switch[s.idx()], groups.of_switch[cable.to.idx()]);
                if gs == gt {
                    local_ports[s.idx()][position[cable.to.idx()]].push(cable.port);
                } else {
                    global_links[gs * g + gt].push((s, cable.port));
                }
            }
        }
        LinkPlan { graph, groups: groups.clone(), position, local_ports, global_links }
    }

    /// Figure 4 for every switch and LID. Destinations of one group are
    /// spread round-robin over the global links that reach it from each
    /// source group (by their rank among that group's LIDs), and over
    /// parallel local cables by LID; every switch of a source group makes the
    /// same choice, so the tables stay destination-based and consistent.
    fn forwarding_tables(&self, fabric: &Fabric) -> Result<Vec<Lft>, Error> {
        let destinations = self.destinations(fabric);
        let mut lfts = Routing::empty_lfts(fabric);
        // Each switch's row is independent: fill rows on all cores. Most
        // entries repeat one port per destination group (one global link
        // between two groups, one cable between two members), so those
        // are looked up once per switch; the rest take `next_port`.
        const PER_LID: PortNum = NO_PATH;
        crate::parallel::for_each_row(&mut lfts, |s, lft| {
            let s = SwitchId::new(s);
            let gs = self.groups.of_switch[s.idx()];
            let g = self.groups.members.len();
            let toward_group: Vec<PortNum> = (0..g)
                .map(|gd| match self.global_links[gs * g + gd].as_slice() {
                    [(owner, port)] if *owner == s => *port,
                    [(owner, _)] => self.single_local_port(s, *owner).unwrap_or(PER_LID),
                    _ => PER_LID,
                })
                .collect();
            let toward_member: Vec<PortNum> = self.groups.members[gs]
                .iter()
                .map(|&m| if m == s { PER_LID } else { self.single_local_port(s, m).unwrap_or(PER_LID) })
                .collect();
            for d in &destinations {
                let known = match d.group as usize == gs {
                    true => toward_member[self.position[d.switch.idx()]],
                    false => toward_group[d.group as usize],
                };
                lft.set(d.lid, if known == PER_LID { self.next_port(s, d) } else { known });
            }
        });
        Ok(lfts)
    }

    /// Every routable LID with where it is delivered.
    fn destinations(&self, fabric: &Fabric) -> Vec<Destination> {
        let mut rank_in_group = vec![0usize; self.groups.members.len()];
        let mut out = Vec::with_capacity(fabric.lft_len());
        for (lid, owner) in fabric.lids() {
            let Some(switch) = fabric.lid_switch(lid) else {
                log::warn!(
                    "dla: LID {lid} of {} is not cabled to a switch; left unrouted",
                    crate::fabric::describe(fabric.node(owner.node))
                );
                continue;
            };
            let group = self.groups.of_switch[switch.idx()];
            let rank = rank_in_group[group];
            rank_in_group[group] += 1;
            let final_port = fabric.delivery_port(owner);
            out.push(Destination { lid, final_port, switch, group: group as u32, rank: rank as u32 });
        }
        out
    }

    /// The out-port of switch `s` towards `d` (Figure 4).
    fn next_port(&self, s: SwitchId, d: &Destination) -> PortNum {
        let (dst, dst_group) = (d.switch, d.group as usize);
        if s == dst {
            return d.final_port;
        }
        let gs = self.groups.of_switch[s.idx()];
        let via = if gs == dst_group {
            dst
        } else {
            let links = &self.global_links[gs * self.groups.members.len() + dst_group];
            let (owner, port) = if links.len() == 1 { links[0] } else { links[d.rank as usize % links.len()] };
            if owner == s {
                return port;
            }
            owner
        };
        self.local_port(s, via, d.lid)
    }

    /// The port from `from` to group member `to` when one cable joins them.
    fn single_local_port(&self, from: SwitchId, to: SwitchId) -> Option<PortNum> {
        match self.local_ports[from.idx()][self.position[to.idx()]].as_slice() {
            [port] => Some(*port),
            _ => None,
        }
    }

    fn local_port(&self, from: SwitchId, to: SwitchId, lid: Lid) -> PortNum {
        let ports = &self.local_ports[from.idx()][self.position[to.idx()]];
        if ports.len() == 1 {
            ports[0]
        } else {
            ports[lid.idx() % ports.len()]
        }
    }

    fn class(&self, s: SwitchId, port: PortNum) -> PortClass {
        match self.graph.peer(s, port) {
            None => PortClass::Unused,
            Some(Peer::Ca(_)) => PortClass::Terminal,
            Some(Peer::Switch { switch, .. }) if switch == s => PortClass::Unused,
            Some(Peer::Switch { switch, .. }) if self.groups.of_switch[switch.idx()] == self.groups.of_switch[s.idx()] => {
                PortClass::Local
            }
            Some(Peer::Switch { .. }) => PortClass::Global,
        }
    }

    /// Figure 8: VL 1 exactly when a packet enters on a global port and
    /// leaves on a local one, for every SL; VL 0 everywhere else. CA ports
    /// send the path SL on VL 0.
    fn sl2vl_tables(&self, fabric: &Fabric, sl: u8) -> Sl2Vl {
        let mut tables = Sl2Vl::new(fabric, ALL_VL0);
        let shifted = [1u8; NUM_SLS];
        for s in self.graph.ids() {
            let classes: Vec<PortClass> =
                (0..self.graph.port_slots(s)).map(|p| self.class(s, PortNum::new(p as u8))).collect();
            for (inp, &ic) in classes.iter().enumerate() {
                if ic != PortClass::Global {
                    continue;
                }
                for (outp, &oc) in classes.iter().enumerate() {
                    if oc == PortClass::Local {
                        tables.set_switch(s, PortNum::new(inp as u8), PortNum::new(outp as u8), shifted);
                    }
                }
            }
        }
        tables.set_ca(sl, 0);
        tables
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricBuilder, NodeId, NodeKind, PortRef};
    use crate::routing::walk::trace;

    /// A fully connected Dragonfly from the generator, LIDs assigned,
    /// port numbers shuffled when `shuffle` is set.
    fn dragonfly(a: usize, h: usize, p: usize, groups: usize, shuffle: Option<u64>) -> Fabric {
        let params = crate::gen::dragonfly::Params { groups, ..crate::gen::dragonfly::Params::new(a, h, p) };
        let mut b = crate::gen::dragonfly::dragonfly(&params).unwrap();
        if let Some(seed) = shuffle {
            b = crate::gen::shuffle_ports(&b, seed);
        }
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    /// A Dragonfly with two global links per group pair that lost a
    /// switch, or an inter-switch cable when `drop_cable`.
    fn damaged_dragonfly(drop_cable: bool) -> Fabric {
        let params = crate::gen::dragonfly::Params { groups: 6, ..crate::gen::dragonfly::Params::new(5, 2, 1) };
        let b = crate::gen::dragonfly::dragonfly(&params).unwrap();
        let (mut b, dropped) = crate::gen::degrade::drop_switches(&b, 0.03, 1).unwrap();
        assert_eq!(dropped, 1);
        if drop_cable {
            crate::gen::degrade::drop_links(&mut b, 0.02, 3).unwrap();
        }
        let mut b = crate::gen::shuffle_ports(&b, 5);
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn defaults_are_what_the_options_say() {
        assert_eq!(DlaOptions::read(&Section::empty(NAME)).unwrap(), DlaOptions::default());
    }

    #[test]
    fn mapping_finds_the_groups_of_a_dragonfly_that_lost_a_switch() {
        let f = damaged_dragonfly(false);
        let e = route(&f, &DlaOptions::default()).unwrap_err().to_string();
        assert!(e.contains("dla.groups mapping"), "{e}");
        let config = DlaOptions { groups: GroupDiscovery::Mapping, ..DlaOptions::default() };
        let r = route(&f, &config).unwrap();
        let report = crate::analysis::report::analyze(&f, &r);
        assert!(report.delivered(), "{:?}", report.failures);
        assert!(report.max_hops() <= 3);
        assert!(report.credit_loop.is_none());
        let groups = groups_by_mapping(f.graph()).unwrap();
        let mut sizes: Vec<usize> = groups.members.iter().map(Vec::len).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![4, 5, 5, 5, 5, 5]);
    }

    #[test]
    fn mapping_still_declines_a_group_with_a_missing_cable() {
        let config = DlaOptions { groups: GroupDiscovery::Mapping, ..DlaOptions::default() };
        let e = route(&damaged_dragonfly(true), &config).unwrap_err().to_string();
        assert!(e.contains("not cabled") || e.contains("no global link"), "{e}");
    }

    /// Switches a packet from CA `src_ca` (port 1) to `dlid` passes.
    fn path(f: &Fabric, r: &Routing, src_ca: NodeId, dlid: Lid) -> Option<Vec<SwitchId>> {
        trace(f, &r.lfts, PortRef::new(src_ca, 1), dlid).ok().map(|hops| hops.iter().map(|h| h.switch).collect())
    }

    #[test]
    fn every_pair_takes_a_minimal_dragonfly_path() {
        for shuffle in [None, Some(7)] {
            let f = dragonfly(4, 2, 2, 9, shuffle);
            let r = route(&f, &DlaOptions::default()).unwrap();
            let groups = discover_groups(f.graph()).unwrap();
            let group = |s: SwitchId| groups.of_switch[s.idx()];
            for src in f.cas() {
                for (dlid, owner) in f.lids() {
                    let path = path(&f, &r, src, dlid).unwrap_or_else(|| panic!("no route {src} -> {dlid}"));
                    let globals = path.windows(2).filter(|w| group(w[0]) != group(w[1])).count();
                    assert!(path.len() <= 4, "{src}->{dlid} ({owner:?}): {} switch hops", path.len() - 1);
                    assert!(globals <= 1, "{src}->{dlid}: {globals} global hops");
                    // Local hops: at most one before and one after the global hop.
                    assert!(path.len() - 1 - globals <= 2);
                }
            }
        }
    }

    #[test]
    fn groups_do_not_depend_on_port_numbering() {
        let plain = discover_groups(dragonfly(4, 2, 2, 9, None).graph()).unwrap();
        let shuffled = discover_groups(dragonfly(4, 2, 2, 9, Some(99)).graph()).unwrap();
        assert_eq!(plain, shuffled);
        assert_eq!(plain.members.len(), 9);
        assert!(plain.members.iter().all(|m| m.len() == 4));
    }

    #[test]
    fn sl2vl_follows_figure_8() {
        let f = dragonfly(4, 2, 2, 9, Some(3));
        let r = route(&f, &DlaOptions { sl: 5, ..DlaOptions::default() }).unwrap();
        let groups = discover_groups(f.graph()).unwrap();
        let sl2vl = r.sl2vl.as_ref().unwrap();
        let kind = |s: SwitchId, port: u8| -> &'static str {
            match f.switch_node(s).port(port).and_then(|p| p.remote) {
                None => "none",
                Some(r) => match f.switch_id(r.node) {
                    None => "terminal",
                    Some(t) if groups.of_switch[t.idx()] == groups.of_switch[s.idx()] => "local",
                    Some(_) => "global",
                },
            }
        };
        let mut shifted = 0;
        for s in f.switch_ids() {
            let ports = f.switch_node(s).port_slots() as u8;
            for i in 0..ports {
                for o in 1..ports {
                    let want = if kind(s, i) == "global" && kind(s, o) == "local" { 1 } else { 0 };
                    shifted += want;
                    let table = sl2vl.switch_table(s, PortNum::new(i), PortNum::new(o));
                    assert_eq!(table, &[want; 16], "{s} in {i} out {o}");
                }
            }
        }
        // Each switch: h global in-ports times a-1 local out-ports.
        assert_eq!(shifted, 36 * 2 * 3);
        assert_eq!(r.path_sl.sl(Lid::from_raw(1), Lid::from_raw(2)), 5);
        assert_eq!(sl2vl.ca_table(&[9; 16])[5], 0);
        assert_eq!(sl2vl.ca_table(&[9; 16])[4], 9, "other SLs keep OpenSM's mapping on CA ports");
        assert_eq!(r.vls_needed(), 2);
    }

    #[test]
    fn destinations_spread_evenly_over_parallel_global_links() {
        // 5 groups of 4 switches with h=2: 8 global ports per group, 4 other
        // groups, so two links join every pair of groups.
        let f = dragonfly(4, 2, 1, 5, None);
        let r = route(&f, &DlaOptions::default()).unwrap();
        let groups = discover_groups(f.graph()).unwrap();
        let group = |s: SwitchId| groups.of_switch[s.idx()];
        // Count, per global cable from group 0 to group 1, the CA LIDs of
        // group 1 it carries (as the last hop out of group 0).
        let mut per_link = std::collections::BTreeMap::new();
        for (dlid, owner) in f.ca_lids() {
            if group(f.lid_switch(dlid).unwrap()) != 1 {
                continue;
            }
            for &s in &groups.members[0] {
                let out = r.lfts[s].get(dlid);
                if f.graph().switch_behind(s, out).map(group) == Some(1) {
                    per_link.entry((s, out)).or_insert_with(Vec::new).push((dlid, owner));
                }
            }
        }
        let counts: Vec<usize> = per_link.values().map(Vec::len).collect();
        assert_eq!(counts.len(), 2, "two global links from group 0 to group 1: {per_link:?}");
        assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1, "{counts:?}");
    }

    #[test]
    fn per_group_shortcuts_give_figure_4_ports() {
        // One and two global links per group pair, and groups of unequal
        // size (a switch lost; groups found by the mapping).
        let mapped = DlaOptions { groups: GroupDiscovery::Mapping, ..DlaOptions::default() };
        for (f, config) in [
            (dragonfly(4, 2, 2, 9, Some(3)), DlaOptions::default()),
            (dragonfly(4, 2, 1, 5, Some(4)), DlaOptions::default()),
            (damaged_dragonfly(false), mapped),
        ] {
            let groups = match config.groups {
                GroupDiscovery::Mapping => groups_by_mapping(f.graph()).unwrap(),
                GroupDiscovery::Neighbourhood => discover_groups(f.graph()).unwrap(),
            };
            let plan = LinkPlan::new(&f, &groups);
            let lfts = plan.forwarding_tables(&f).unwrap();
            for (s, lft) in f.switch_ids().zip(&lfts) {
                for d in plan.destinations(&f) {
                    assert_eq!(lft.get(d.lid), plan.next_port(s, &d), "{s}, LID {}", d.lid);
                }
            }
        }
    }

    #[test]
    fn declines_a_dragonfly_with_a_missing_global_link() {
        let full = dragonfly(3, 1, 1, 4, None);
        // Rebuild without the single global cable between the first two groups.
        let mut b = FabricBuilder::new();
        for n in full.nodes() {
            let id = b.add_node(n.kind, n.guid, n.desc.clone(), n.port_slots() as u8 - 1);
            assert_eq!(id.idx(), b.node_count() - 1);
        }
        let g = discover_groups(full.graph()).unwrap();
        for id in full.node_ids() {
            for (port, peer) in full.node(id).links() {
                let cut = match (full.switch_id(id), full.switch_id(peer.node)) {
                    (Some(x), Some(y)) => {
                        let (gx, gy) = (g.of_switch[x.idx()], g.of_switch[y.idx()]);
                        (gx.min(gy), gx.max(gy)) == (0, 1)
                    }
                    _ => false,
                };
                if !cut {
                    b.connect(PortRef::new(id, port), peer).unwrap();
                }
            }
        }
        b.assign_lids_sequential(0).unwrap();
        let err = route(&b.build().unwrap(), &DlaOptions::default()).unwrap_err().to_string();
        assert!(err.starts_with("dla declines: not a fully connected Dragonfly: no global link joins"), "{err}");
        assert!(err.contains("(df-g0-s0)"), "names a switch of the first group: {err}");
    }

    #[test]
    fn declines_a_ring_and_names_switches() {
        let mut b = FabricBuilder::new();
        let s: Vec<_> = (0..6).map(|i| b.add_node(NodeKind::Switch, 0x10 + i, format!("ring{i}"), 3)).collect();
        for i in 0..6 {
            b.connect(PortRef::new(s[i], 1), PortRef::new(s[(i + 1) % 6], 2)).unwrap();
            let h = b.add_node(NodeKind::Ca, 0x100 + i as u64 * 2, "", 1);
            b.connect(PortRef::new(h, 1), PortRef::new(s[i], 3)).unwrap();
        }
        b.assign_lids_sequential(0).unwrap();
        let err = route(&b.build().unwrap(), &DlaOptions::default()).unwrap_err().to_string();
        assert!(err.contains("dla declines: not a Dragonfly with fully connected groups"), "{err}");
        assert!(err.contains("(ring"), "{err}");
    }
}
