//! `mlid`: the Multiple LID routing of Lin, Chung & Huang ("A Multiple LID
//! Routing Scheme for Fat-Tree-Based InfiniBand Networks") for m-port
//! n-trees, recognised from the bare graph (`topology::fattree`).
//!
//! Every host has 2^LMC LIDs; LMC = log2((m/2)^(n−1)) gives one LID per
//! path between the two halves of the tree. A packet for LID `lid` of host
//! P(p) goes down towards p where the switch lies above p (equation 1) and
//! otherwise up by the digit of `lid − 1` the switch's level picks
//! (equation 2). The paper numbers LIDs ideally (BaseLID(P(p)) − 1 =
//! 2^LMC·PID); OpenSM numbers them its own way, so the equations run on
//! that ideal number, 2^LMC·PID(P(p)) + (lid − base LID), computed from
//! the recovered labels. With fewer LIDs than paths this degrades into
//! d-mod-k on (PID, offset): fewer paths, still spread, still up*/down*.
//! Sources pick the LID with the path-selection scheme (§4.2): `offset`.
//! Up*/down* routes have no credit loops: one VL, SL2VL left as it is.

use crate::config::{ConfigError, OptionSpec, Section};
use crate::engines::{EngineInfo, Outcome};
use crate::error::Error;
use crate::fabric::{Fabric, Lid, PortNum, PortRef};
use crate::routing::{DlidChoice, Lft, PathSl, Routing, NO_PATH};
use crate::topology::fattree::{recognize, FatTree};

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
        Ok(MlidOptions { raise_lmc: s.flag(&RAISE_LMC)? })
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "multiple-LID routing for m-port n-trees: 2^LMC up*/down* paths per host, chosen per source",
    needs_qos: false,
    options: &[&[RAISE_LMC]],
    build: |s| Ok(Box::new(super::Configured { options: MlidOptions::read(s)?, route: outcome })),
};

/// The routing, the path selection every source needs to use it, and the
/// LMC to ask OpenSM for when `raise_lmc` is on and the LIDs fall short.
fn outcome(fabric: &Fabric, options: &MlidOptions) -> Result<Outcome, Error> {
    let tree = tree_of(fabric)?;
    let routing = route_tree(fabric, &tree)?;
    let lmc_request = if options.raise_lmc { lmc_for(fabric, &tree) } else { None };
    Ok(Outcome { routing, dlid_choice: Some(choice_of(fabric, &tree)), lmc_request })
}

/// The LMC the tree asks for and the LMC to configure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LmcPlan {
    /// log2((m/2)^(n−1)), rounded up.
    pub needed: u8,
    /// `needed`, or the largest LMC whose LIDs fit the LID space.
    pub target: u8,
    pub max_lid: u16,
}

impl LmcPlan {
    /// `max_lid`: the highest LID the switches' tables hold. OpenSM aligns
    /// every multi-LID range to 2^LMC, so a switch's single LID between two
    /// hosts' ranges can cost up to 2^LMC LIDs: counted as that, to be safe.
    pub fn new(tree: &FatTree, switches: usize, max_lid: u16) -> Self {
        let needed = tree.paths().next_power_of_two().trailing_zeros() as u8;
        let ports = tree.host_label.len() + switches;
        let fits = |lmc: u8| ports << lmc <= max_lid as usize;
        let target = (0..=needed).rev().find(|&l| fits(l)).unwrap_or(0);
        LmcPlan { needed, target, max_lid }
    }

    /// Why `target` is below `needed`, if it is.
    pub fn limit_note(&self, tree: &FatTree) -> Option<String> {
        (self.target < self.needed).then(|| {
            format!(
                "LMC {} ({} LIDs per host) would need up to {} LIDs, more than the {} the switches' \
                 forwarding tables hold; LMC {} is the largest that fits",
                self.needed,
                1u32 << self.needed,
                tree.host_label.len() << self.needed,
                self.max_lid,
                self.target
            )
        })
    }
}

/// The recognised tree, or a decline that says what is wrong. With LMC > 0
/// it also says which fallback works: OpenSM's ftree refuses LMC > 0
/// ("LMC > 0 is not supported by fat-tree routing"), so `mlid,ftree`
/// would end in minhop; updn routes every LID of a damaged tree up*/down*
/// and finds its roots itself (checked under ibsim: tests/soak_opensm.rs).
pub fn tree_of(fabric: &Fabric) -> Result<FatTree, Error> {
    recognize(fabric).map_err(|why| {
        let fallback = if fabric.lmc() > 0 {
            format!(
                "; with lmc {} the next engine should be updn (`routing_engine mlid,updn`): ftree refuses LMC > 0",
                fabric.lmc()
            )
        } else {
            String::new()
        };
        Error::declined(NAME, format!("the fabric is not an m-port n-tree: {why}{fallback}"))
    })
}

/// The LMC to configure for this fabric, when it differs from the one the
/// LIDs were assigned with (for `mlid.raise_lmc`).
pub fn lmc_to_request(fabric: &Fabric) -> Result<Option<u8>, Error> {
    Ok(lmc_for(fabric, &tree_of(fabric)?))
}

fn lmc_for(fabric: &Fabric, tree: &FatTree) -> Option<u8> {
    let plan = LmcPlan::new(tree, fabric.switch_count(), fabric.max_unicast_lid());
    (fabric.lmc() < plan.target).then_some(plan.target)
}

pub fn route(fabric: &Fabric, _options: &MlidOptions) -> Result<Routing, Error> {
    route_tree(fabric, &tree_of(fabric)?)
}

fn route_tree(fabric: &Fabric, tree: &FatTree) -> Result<Routing, Error> {
    let plan = LmcPlan::new(tree, fabric.switches().len(), fabric.max_unicast_lid());
    log::info!(
        "{NAME}: {}-port {}-tree: {} hosts, {} switches, {} paths between halves",
        tree.m,
        tree.n,
        tree.host_label.len(),
        fabric.switches().len(),
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
    let mut lfts = Routing::empty_lfts(fabric);
    let mut routed_hosts = 0;
    for (at, port) in fabric.end_ports() {
        if fabric.node(at.node).is_switch() {
            continue;
        }
        let Some(label) = tree.host_label.get(&at.node) else { continue };
        let Some(host_port) = port.remote.map(|r| r.port) else { continue };
        routed_hosts += 1;
        let count = port.lid_count() as usize;
        let pid = tree.pid(label);
        for (o, lid) in port.lids().enumerate() {
            let ideal = pid * count + o;
            for (s, lft) in lfts.iter_mut().enumerate() {
                lft.set(lid, out_port(tree, s, label, ideal, host_port));
            }
        }
    }
    route_switch_lids(fabric, &mut lfts);
    log::info!("{NAME}: {routed_hosts} host ports routed on up*/down* paths, 1 VL");
    Ok(Routing { engine: NAME.to_string(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) })
}

/// Equations (1) and (2) at switch `s` for the host labelled `label`, for
/// the LID whose ideal number (the paper's lid − 1) is `ideal`.
fn out_port(tree: &FatTree, s: usize, label: &[usize], ideal: usize, host_port: PortNum) -> PortNum {
    let l = tree.level[s];
    if tree.prefix[s][..] == label[..l] {
        if l == tree.n - 1 {
            host_port
        } else {
            PortNum::new(tree.down[s][label[l]].0)
        }
    } else {
        let digit = (ideal / tree.k.pow((tree.n - 1 - l) as u32)) % tree.k;
        PortNum::new(tree.up[s][digit].0)
    }
}

/// Switch LIDs (management traffic, outside the paper) get shortest paths,
/// lowest port first.
fn route_switch_lids(fabric: &Fabric, lfts: &mut [Lft]) {
    let graph = fabric.graph();
    for t in graph.ids() {
        let Some(port) = fabric.switch_node(t).port(0) else { continue };
        for (s, lft) in graph.ids().zip(lfts.iter_mut()) {
            let out = if s == t {
                PortNum::MANAGEMENT
            } else {
                let d = graph.dist(s, t);
                graph.cables(s).iter().find(|c| graph.dist(c.to, t) + 1 == d).map_or(NO_PATH, |c| c.port)
            };
            for lid in port.lids() {
                lft.set(lid, out);
            }
        }
    }
}

/// The DLID a source host should use for each destination host (§4.2):
/// (source base LID, destination base LID, DLID), for every ordered pair
/// of host ports.
pub fn path_selection(fabric: &Fabric) -> Result<DlidChoice, Error> {
    Ok(choice_of(fabric, &tree_of(fabric)?))
}

fn choice_of(fabric: &Fabric, tree: &FatTree) -> DlidChoice {
    let hosts: Vec<(PortRef, Lid, u32, &Vec<usize>)> = fabric
        .end_ports()
        .filter_map(|(at, p)| tree.host_label.get(&at.node).map(|label| (at, p.lid, p.lid_count(), label)))
        .collect();
    let mut out = DlidChoice::new();
    for &(src, slid, _, src_label) in &hosts {
        for &(dst, dbase, count, dst_label) in &hosts {
            if src.node != dst.node {
                let offset = tree.offset(src_label, dst_label) % count as usize;
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
    use crate::routing::walk::trace;
    use crate::gen::{self, fattree::fattree};

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
            assert!(report.max_hops() <= 2 * (n - 1), "FT({m},{n}): {} hops", report.max_hops());
            assert_eq!(r.vls_needed(), 1);
        }
    }

    /// §4.2 with full LMC: the hosts of a source group reach one
    /// destination over disjoint paths (Fig. 11).
    #[test]
    fn a_groups_sources_take_disjoint_paths_to_one_host() {
        let f = tree_fabric(8, 3, 4);
        let tree = recognize(&f).unwrap();
        let choice = path_selection(&f).unwrap();
        let port_of = |label: &[usize]| {
            let (&node, _) = tree.host_label.iter().find(|(_, l)| l.as_slice() == label).unwrap();
            (PortRef::new(node, 1), f.node(node).port(1).unwrap().lid)
        };
        let r = route(&f, &MlidOptions::default()).unwrap();
        let (_, dlid_base) = port_of(&[5, 2, 1]);
        let mut used = std::collections::HashSet::new();
        for a in 0..4 {
            for b in 0..4 {
                let (src, slid) = port_of(&[1, a, b]);
                let dlid = choice.get(slid, dlid_base).unwrap();
                assert_eq!(dlid.raw() - dlid_base.raw(), (a * 4 + b) as u16);
                let hops = trace(&f, &r.lfts, src, dlid).unwrap();
                assert_eq!(hops.len(), 5, "up to a root and down");
                // Up from the leaf, up from level 1, down from the root:
                // no two sources share a link (down from level 1 they
                // must: the destination leaf has only 4 uplinks).
                for h in &hops[..3] {
                    assert!(used.insert((h.switch, h.out_port)), "two sources share a link");
                }
            }
        }
    }

    #[test]
    fn lmc_plan_needs_and_fits() {
        let t = recognize(&tree_fabric(4, 3, 0)).unwrap();
        assert_eq!(LmcPlan::new(&t, 20, 0xBFFF), LmcPlan { needed: 2, target: 2, max_lid: 0xBFFF });
        let big = recognize(&tree_fabric(16, 3, 0)).unwrap();
        let plan = LmcPlan::new(&big, 320, 0xBFFF);
        assert_eq!((plan.needed, plan.target), (6, 5));
        assert!(plan.limit_note(&big).unwrap().contains("LMC 5 is the largest that fits"));
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
    }

    #[test]
    fn declines_what_is_not_a_tree() {
        let mut b = gen::hyperx::hyperx(&[3, 3], &[1, 1], 1).unwrap();
        b.assign_lids_sequential(0).unwrap();
        let e = route(&b.build().unwrap(), &MlidOptions::default()).unwrap_err().to_string();
        assert!(e.contains("mlid declines: the fabric is not an m-port n-tree"), "{e}");
        assert!(!e.contains("updn"), "no fallback advice needed at lmc 0: {e}");
        // With LMC > 0 the decline names the fallback that can route it.
        let mut b = gen::hyperx::hyperx(&[3, 3], &[1, 1], 1).unwrap();
        b.assign_lids_sequential(2).unwrap();
        let e = route(&b.build().unwrap(), &MlidOptions::default()).unwrap_err().to_string();
        assert!(e.contains("`routing_engine mlid,updn`") && e.contains("ftree refuses LMC > 0"), "{e}");
    }
}
