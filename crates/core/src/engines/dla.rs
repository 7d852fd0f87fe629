//! `dla`: deterministic minimal routing for fully connected Dragonflies
//! (Kim & Dally), deadlock-free with one SL and two VLs by shifting to VL 1
//! on the local hop that follows a global hop (DLA paper, Figures 4 and 8).

use crate::config::{Config, GroupDiscovery};
use crate::error::Error;
use crate::fabric::{describe, Fabric, Peer};
use crate::routing::{PathSl, Routing, Sl2Vl, ALL_VL0, NUM_SLS, NO_PATH};
use crate::topology::dragonfly::{discover_groups, groups_by_mapping, Groups, NotADragonfly};

const NAME: &str = "dla";

/// What a switch port is cabled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PortClass {
    Unused,
    Terminal,
    Local,
    Global,
}

pub fn route(fabric: &Fabric, config: &Config) -> Result<Routing, Error> {
    let adjacency = fabric.switch_adjacency();
    let groups = match config.dla.groups {
        GroupDiscovery::Neighbourhood => discover_groups(&adjacency),
        GroupDiscovery::Mapping => groups_by_mapping(&adjacency),
    }
    .map_err(|e| Error::declined(NAME, explain(fabric, &e)))?;
    let plan = LinkPlan::new(fabric, &adjacency, &groups);
    let lfts = plan.forwarding_tables(fabric)?;
    let sl2vl = plan.sl2vl_tables(fabric, config.dla.sl);
    let sizes = groups.members.iter().map(Vec::len);
    let (smallest, largest) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
    let size = if smallest == largest { smallest.to_string() } else { format!("{smallest} to {largest}") };
    log::info!("dla: {} groups of {size} switches, {} LIDs routed", groups.members.len(), fabric.lids().count());
    Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: Some(sl2vl), path_sl: PathSl::Uniform(config.dla.sl) })
}

fn explain(fabric: &Fabric, e: &NotADragonfly) -> String {
    let name = |si: usize| describe(fabric.node(fabric.switches()[si]));
    let names = |set: &[usize]| set.iter().map(|&s| name(s)).collect::<Vec<_>>().join(", ");
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
    lid: u16,
    /// Out-port at the destination switch.
    final_port: u8,
    switch: u32,
    group: u32,
    /// Position among the LIDs delivered in `group`, to spread them over
    /// the global links into the group.
    rank: u32,
}

/// Which ports carry traffic between switches and groups.
struct LinkPlan {
    groups: Groups,
    /// Position of each switch within its group.
    position: Vec<usize>,
    /// Per switch, per position in its group: ports to that member.
    local_ports: Vec<Vec<Vec<u8>>>,
    /// Per (source group, destination group): global links as
    /// (switch index in source group, its port), in a fixed order.
    global_links: Vec<Vec<(usize, u8)>>,
    /// Per switch, per port: what is cabled there.
    peers: Vec<Vec<Option<Peer>>>,
}

impl LinkPlan {
    fn new(fabric: &Fabric, adjacency: &[Vec<(u8, usize, u8)>], groups: &Groups) -> Self {
        let g = groups.members.len();
        let mut position = vec![0; adjacency.len()];
        for m in &groups.members {
            for (i, &s) in m.iter().enumerate() {
                position[s] = i;
            }
        }
        let mut local_ports: Vec<Vec<Vec<u8>>> = groups
            .of_switch
            .iter()
            .map(|&gi| vec![Vec::new(); groups.members[gi].len()])
            .collect();
        let mut global_links = vec![Vec::new(); g * g];
        for (s, links) in adjacency.iter().enumerate() {
            for &(port, t, _) in links {
                let (gs, gt) = (groups.of_switch[s], groups.of_switch[t]);
                if gs == gt {
                    local_ports[s][position[t]].push(port);
                } else {
                    global_links[gs * g + gt].push((s, port));
                }
            }
        }
        let peers = fabric.switch_port_peers();
        // Order parallel links by GUID and port, not by where a switch sits
        // in the node list: OpenSM's snapshot and a net file list nodes in
        // different orders, and both must give the same tables.
        let guid = |s: usize| fabric.node(fabric.switches()[s]).guid;
        for links in &mut global_links {
            links.sort_by_key(|&(s, port)| (guid(s), port));
        }
        LinkPlan { groups: groups.clone(), position, local_ports, global_links, peers }
    }

    /// Figure 4 for every switch and LID. Destinations of one group are
    /// spread round-robin over the global links that reach it from each
    /// source group (by their rank among that group's LIDs), and over
    /// parallel local cables by LID; every switch of a source group makes the
    /// same choice, so the tables stay destination-based and consistent.
    fn forwarding_tables(&self, fabric: &Fabric) -> Result<Vec<Vec<u8>>, Error> {
        let destinations = self.destinations(fabric);
        let mut lfts = Routing::empty_lfts(fabric);
        // Each switch's row is independent: fill rows on all cores. Most
        // entries repeat one port per destination group (one global link
        // between two groups, one cable between two members), so those
        // are looked up once per switch; the rest take `next_port`.
        const PER_LID: u8 = NO_PATH;
        crate::parallel::for_each_row(&mut lfts, |s, lft| {
            let gs = self.groups.of_switch[s];
            let g = self.groups.members.len();
            let toward_group: Vec<u8> = (0..g)
                .map(|gd| match self.global_links[gs * g + gd].as_slice() {
                    [(owner, port)] if *owner == s => *port,
                    [(owner, _)] => self.single_local_port(s, *owner).unwrap_or(PER_LID),
                    _ => PER_LID,
                })
                .collect();
            let toward_member: Vec<u8> = self.groups.members[gs]
                .iter()
                .map(|&m| if m == s { PER_LID } else { self.single_local_port(s, m).unwrap_or(PER_LID) })
                .collect();
            for d in &destinations {
                let known = match d.group as usize == gs {
                    true => toward_member[self.position[d.switch as usize]],
                    false => toward_group[d.group as usize],
                };
                lft[d.lid as usize] = if known == PER_LID { self.next_port(s, d) } else { known };
            }
        });
        Ok(lfts)
    }

    /// Every routable LID with where it is delivered.
    fn destinations(&self, fabric: &Fabric) -> Vec<Destination> {
        let mut rank_in_group = vec![0usize; self.groups.members.len()];
        let mut out = Vec::with_capacity(fabric.max_lid() as usize);
        for (lid, owner) in fabric.lids() {
            let Some(dst_node) = fabric.lid_switch(lid) else {
                log::warn!(
                    "dla: LID {lid} of {} is not cabled to a switch; left unrouted",
                    describe(fabric.node(owner.node))
                );
                continue;
            };
            let Some(switch) = fabric.switch_index(dst_node) else { continue };
            let group = self.groups.of_switch[switch];
            let rank = rank_in_group[group];
            rank_in_group[group] += 1;
            let final_port = fabric.delivery_port(owner);
            out.push(Destination { lid, final_port, switch: switch as u32, group: group as u32, rank: rank as u32 });
        }
        out
    }

    /// The out-port of switch `s` towards `d` (Figure 4).
    fn next_port(&self, s: usize, d: &Destination) -> u8 {
        let (dst, dst_group) = (d.switch as usize, d.group as usize);
        if s == dst {
            return d.final_port;
        }
        let gs = self.groups.of_switch[s];
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
    fn single_local_port(&self, from: usize, to: usize) -> Option<u8> {
        match self.local_ports[from][self.position[to]].as_slice() {
            [port] => Some(*port),
            _ => None,
        }
    }

    fn local_port(&self, from: usize, to: usize, lid: u16) -> u8 {
        let ports = &self.local_ports[from][self.position[to]];
        if ports.len() == 1 {
            ports[0]
        } else {
            ports[lid as usize % ports.len()]
        }
    }

    fn class(&self, s: usize, port: u8) -> PortClass {
        match self.peers[s].get(port as usize).copied().flatten() {
            None => PortClass::Unused,
            Some(Peer::Ca(_)) => PortClass::Terminal,
            Some(Peer::Switch(t)) if self.groups.of_switch[t] == self.groups.of_switch[s] => PortClass::Local,
            Some(Peer::Switch(_)) => PortClass::Global,
        }
    }


    /// Figure 8: VL 1 exactly when a packet enters on a global port and
    /// leaves on a local one, for every SL; VL 0 everywhere else. CA ports
    /// send the path SL on VL 0.
    fn sl2vl_tables(&self, fabric: &Fabric, sl: u8) -> Sl2Vl {
        let mut tables = Sl2Vl::new(fabric, ALL_VL0);
        let shifted = [1u8; NUM_SLS];
        for (s, &node) in fabric.switches().iter().enumerate() {
            let classes: Vec<PortClass> =
                (0..fabric.node(node).port_slots()).map(|p| self.class(s, p as u8)).collect();
            for (inp, &ic) in classes.iter().enumerate() {
                if ic != PortClass::Global {
                    continue;
                }
                for (outp, &oc) in classes.iter().enumerate() {
                    if oc == PortClass::Local {
                        tables.set_switch(s, inp as u8, outp as u8, shifted);
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
    use crate::fabric::{FabricBuilder, NodeKind, PortRef};

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
    fn mapping_finds_the_groups_of_a_dragonfly_that_lost_a_switch() {
        let f = damaged_dragonfly(false);
        let e = route(&f, &Config::default()).unwrap_err().to_string();
        assert!(e.contains("dla.groups mapping"), "{e}");
        let mut config = Config::default();
        config.dla.groups = GroupDiscovery::Mapping;
        let r = route(&f, &config).unwrap();
        let report = crate::analysis::report::analyze(&f, &r);
        assert!(report.delivered(), "{:?}", report.failures);
        assert!(report.max_hops() <= 3);
        assert!(report.credit_loop.is_none());
        let groups = groups_by_mapping(&f.switch_adjacency()).unwrap();
        let mut sizes: Vec<usize> = groups.members.iter().map(Vec::len).collect();
        sizes.sort_unstable();
        assert_eq!(sizes, vec![4, 5, 5, 5, 5, 5]);
    }

    #[test]
    fn mapping_still_declines_a_group_with_a_missing_cable() {
        let mut config = Config::default();
        config.dla.groups = GroupDiscovery::Mapping;
        let e = route(&damaged_dragonfly(true), &config).unwrap_err().to_string();
        assert!(e.contains("not cabled") || e.contains("no global link"), "{e}");
    }

    /// Switch indices a packet from CA `src_ca` (port 1) to `dlid` passes.
    fn trace(f: &Fabric, r: &Routing, src_ca: usize, dlid: u16) -> Option<Vec<usize>> {
        crate::analysis::paths::trace(f, r, PortRef::new(src_ca, 1), dlid)
            .ok()
            .map(|hops| hops.iter().map(|h| h.switch).collect())
    }

    #[test]
    fn every_pair_takes_a_minimal_dragonfly_path() {
        for shuffle in [None, Some(7)] {
            let f = dragonfly(4, 2, 2, 9, shuffle);
            let r = route(&f, &Config::default()).unwrap();
            let groups = discover_groups(&f.switch_adjacency()).unwrap();
            for src in f.cas() {
                for (dlid, owner) in f.lids() {
                    let path = trace(&f, &r, src, dlid).unwrap_or_else(|| panic!("no route {src} -> {dlid}"));
                    let globals = path.windows(2).filter(|w| groups.of_switch[w[0]] != groups.of_switch[w[1]]).count();
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
        let plain = discover_groups(&dragonfly(4, 2, 2, 9, None).switch_adjacency()).unwrap();
        let shuffled = discover_groups(&dragonfly(4, 2, 2, 9, Some(99)).switch_adjacency()).unwrap();
        assert_eq!(plain, shuffled);
        assert_eq!(plain.members.len(), 9);
        assert!(plain.members.iter().all(|m| m.len() == 4));
    }

    #[test]
    fn sl2vl_follows_figure_8() {
        let f = dragonfly(4, 2, 2, 9, Some(3));
        let r = route(&f, &Config { dla: crate::config::DlaConfig { sl: 5, ..Default::default() }, ..Config::default() }).unwrap();
        let groups = discover_groups(&f.switch_adjacency()).unwrap();
        let sl2vl = r.sl2vl.as_ref().unwrap();
        let kind = |s: usize, port: u8| -> &'static str {
            match f.node(f.switches()[s]).port(port).and_then(|p| p.remote) {
                None => "none",
                Some(r) => match f.switch_index(r.node) {
                    None => "terminal",
                    Some(t) if groups.of_switch[t] == groups.of_switch[s] => "local",
                    Some(_) => "global",
                },
            }
        };
        let mut shifted = 0;
        for s in 0..f.switches().len() {
            let ports = f.node(f.switches()[s]).port_slots() as u8;
            for i in 0..ports {
                for o in 1..ports {
                    let want = if kind(s, i) == "global" && kind(s, o) == "local" { 1 } else { 0 };
                    shifted += want;
                    assert_eq!(sl2vl.switch_table(s, i, o), &[want; 16], "switch {s} in {i} out {o}");
                }
            }
        }
        // Each switch: h global in-ports times a-1 local out-ports.
        assert_eq!(shifted, 36 * 2 * 3);
        assert_eq!(r.path_sl.sl(1, 2), 5);
        assert_eq!(sl2vl.ca_table(&[9; 16])[5], 0);
        assert_eq!(sl2vl.ca_table(&[9; 16])[4], 9, "other SLs keep OpenSM's mapping on CA ports");
        assert_eq!(r.vls_needed(), 2);
    }

    #[test]
    fn destinations_spread_evenly_over_parallel_global_links() {
        // 5 groups of 4 switches with h=2: 8 global ports per group, 4 other
        // groups, so two links join every pair of groups.
        let f = dragonfly(4, 2, 1, 5, None);
        let r = route(&f, &Config::default()).unwrap();
        let groups = discover_groups(&f.switch_adjacency()).unwrap();
        // Count, per global cable from group 0 to group 1, the CA LIDs of
        // group 1 it carries (as the last hop out of group 0).
        let mut per_link = std::collections::BTreeMap::new();
        for (dlid, owner) in f.lids().filter(|(_, o)| !f.node(o.node).is_switch()) {
            let dst = f.switch_index(f.lid_switch(dlid).unwrap()).unwrap();
            if groups.of_switch[dst] != 1 {
                continue;
            }
            for &s in &groups.members[0] {
                let out = r.lfts[s][dlid as usize];
                let peer = f.node(f.switches()[s]).port(out).unwrap().remote.unwrap();
                if f.switch_index(peer.node).map(|t| groups.of_switch[t]) == Some(1) {
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
        let mut mapped = Config::default();
        mapped.dla.groups = GroupDiscovery::Mapping;
        for (f, config) in [
            (dragonfly(4, 2, 2, 9, Some(3)), Config::default()),
            (dragonfly(4, 2, 1, 5, Some(4)), Config::default()),
            (damaged_dragonfly(false), mapped),
        ] {
            let adjacency = f.switch_adjacency();
            let groups = match config.dla.groups {
                GroupDiscovery::Mapping => groups_by_mapping(&adjacency).unwrap(),
                GroupDiscovery::Neighbourhood => discover_groups(&adjacency).unwrap(),
            };
            let plan = LinkPlan::new(&f, &adjacency, &groups);
            let lfts = plan.forwarding_tables(&f).unwrap();
            for (s, lft) in lfts.iter().enumerate() {
                for d in plan.destinations(&f) {
                    assert_eq!(lft[d.lid as usize], plan.next_port(s, &d), "switch {s}, LID {}", d.lid);
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
            assert_eq!(id, b.node_count() - 1);
        }
        let g = discover_groups(&full.switch_adjacency()).unwrap();
        for (id, n) in full.nodes().iter().enumerate() {
            for (port, peer) in n.links() {
                let cut = match (full.switch_index(id), full.switch_index(peer.node)) {
                    (Some(x), Some(y)) => {
                        let (gx, gy) = (g.of_switch[x], g.of_switch[y]);
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
        let err = route(&b.build().unwrap(), &Config::default()).unwrap_err().to_string();
        assert!(err.starts_with("dla declines: not a fully connected Dragonfly: no global link joins"), "{err}");
        assert!(err.contains("(df-g0-s0)"), "names a switch of the first group: {err}");
    }

    #[test]
    fn declines_a_ring_and_names_switches() {
        let mut b = FabricBuilder::new();
        let s: Vec<usize> = (0..6).map(|i| b.add_node(NodeKind::Switch, 0x10 + i, format!("ring{i}"), 3)).collect();
        for i in 0..6 {
            b.connect(PortRef::new(s[i], 1), PortRef::new(s[(i + 1) % 6], 2)).unwrap();
            let h = b.add_node(NodeKind::Ca, 0x100 + i as u64 * 2, "", 1);
            b.connect(PortRef::new(h, 1), PortRef::new(s[i], 3)).unwrap();
        }
        b.assign_lids_sequential(0).unwrap();
        let err = route(&b.build().unwrap(), &Config::default()).unwrap_err().to_string();
        assert!(err.contains("dla declines: not a Dragonfly with fully connected groups"), "{err}");
        assert!(err.contains("(ring"), "{err}");
    }
}
