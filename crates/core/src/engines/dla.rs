//! `dla`: deterministic minimal routing for fully connected Dragonflies
//! (Kim & Dally), deadlock-free with one SL and two VLs by shifting to VL 1
//! on the local hop that follows a global hop (DLA paper, Figures 4 and 8).

use crate::config::Config;
use crate::error::Error;
use crate::fabric::{describe, Fabric, NodeKind};
use crate::routing::{PathSl, Routing, Sl2Vl, ALL_VL0, NUM_SLS, NO_PATH};
use crate::topology::dragonfly::{discover_groups, Groups, NotADragonfly};

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
    let groups = discover_groups(&adjacency).map_err(|e| Error::declined(NAME, explain(fabric, &e)))?;
    let plan = LinkPlan::new(fabric, &adjacency, &groups);
    let lfts = plan.forwarding_tables(fabric)?;
    let sl2vl = plan.sl2vl_tables(fabric, &adjacency, config.dla.sl);
    log::info!(
        "dla: {} groups of {} switches, {} LIDs routed",
        groups.members.len(),
        groups.members[0].len(),
        fabric.lids().count()
    );
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
            "not a fully connected Dragonfly: the group of {} has {size} switches, expected {expected}; {fix}",
            name(*switch)
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
    /// Per switch, per port: the CA node cabled there.
    terminal: Vec<Vec<Option<usize>>>,
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
        let terminal = fabric
            .switches()
            .iter()
            .map(|&n| {
                let node = fabric.node(n);
                (0..node.port_slots())
                    .map(|p| {
                        let r = node.port(p as u8)?.remote?;
                        (fabric.node(r.node).kind == NodeKind::Ca).then_some(r.node)
                    })
                    .collect()
            })
            .collect();
        LinkPlan { groups: groups.clone(), position, local_ports, global_links, terminal }
    }

    /// Figure 4 for every switch and LID. Destinations of one group are
    /// spread round-robin over the global links that reach it from each
    /// source group (by their rank among that group's LIDs), and over
    /// parallel local cables by LID; every switch of a source group makes the
    /// same choice, so the tables stay destination-based and consistent.
    fn forwarding_tables(&self, fabric: &Fabric) -> Result<Vec<Vec<u8>>, Error> {
        let destinations = self.destinations(fabric);
        let mut lfts = Routing::empty_lfts(fabric);
        // Each switch's row is independent: fill rows on all cores.
        crate::parallel::for_each_row(&mut lfts, |s, lft| {
            for d in &destinations {
                lft[d.lid as usize] = self.next_port(s, d);
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
            // Port of the destination switch where the CA is cabled; 0 for
            // the switch's own LID.
            let final_port = if owner.node == dst_node {
                0
            } else {
                fabric.port(owner).and_then(|p| p.remote).map_or(NO_PATH, |r| r.port)
            };
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

    fn local_port(&self, from: usize, to: usize, lid: u16) -> u8 {
        let ports = &self.local_ports[from][self.position[to]];
        if ports.len() == 1 {
            ports[0]
        } else {
            ports[lid as usize % ports.len()]
        }
    }

    fn class(&self, s: usize, port: u8, adjacency: &[Vec<(u8, usize, u8)>]) -> PortClass {
        if self.terminal[s].get(port as usize).copied().flatten().is_some() {
            return PortClass::Terminal;
        }
        match adjacency[s].iter().find(|l| l.0 == port) {
            Some(&(_, t, _)) if self.groups.of_switch[t] == self.groups.of_switch[s] => PortClass::Local,
            Some(_) => PortClass::Global,
            None => PortClass::Unused,
        }
    }

    /// Figure 8: VL 1 exactly when a packet enters on a global port and
    /// leaves on a local one, for every SL; VL 0 everywhere else. CA ports
    /// send the path SL on VL 0.
    fn sl2vl_tables(&self, fabric: &Fabric, adjacency: &[Vec<(u8, usize, u8)>], sl: u8) -> Sl2Vl {
        let mut tables = Sl2Vl::new(fabric, ALL_VL0);
        let shifted = [1u8; NUM_SLS];
        for (s, &node) in fabric.switches().iter().enumerate() {
            let classes: Vec<PortClass> =
                (0..fabric.node(node).port_slots()).map(|p| self.class(s, p as u8, adjacency)).collect();
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
