//! Which VL every hop of a Dragonfly+ path takes, and the SLs that tell
//! the switches.
//!
//! **The rule.** A path starts on VL 0 and moves up one VL at every
//! backward turn (`super::backward`: down → up at a leaf, global → global
//! at a spine). So within one VL, every dependency between two channels
//! of a path is a forward turn (up → global, up → down, global → down),
//! from a lower class to a higher one in the order up < global < down, and
//! the dependencies of one VL — whichever paths and SLs put them there —
//! close no cycle; between VLs dependencies only go upwards. Hence no
//! credit loop, by construction. Paths with at most one backward turn
//! (every path on a Dragonfly+ with its intact share of cables but for a
//! few missing ones) need 2 VLs, with two 3, and an intact one only VL 0.
//!
//! **SLs.** A switch maps (SL, in-port, out-port) to a VL; it cannot see
//! how many turns a packet has made. So a path is described by the VL of
//! each of its hops (switch, in-port, out-port), its *lane*, and paths
//! whose lanes agree on every hop they share are merged into one SL (base
//! SL + the lane's number). Paths without a backward turn are all on VL 0
//! and share the base SL (lane 0): on an intact Dragonfly+ that is every
//! path between hosts on leaves. The others are placed first-fit on lanes
//! 1, 2, ...; a path with more than two backward turns fits no lane and
//! takes a reserve layer above the lanes, the whole path on one VL,
//! placed so that no layer's dependencies close a cycle
//! (`deadlock::layers::place_paths`).

use std::collections::HashMap;

use super::{backward, Class, Roles};
use crate::deadlock::virtual_layers::placement::place_paths;
use crate::error::Decline;
use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchId};
use crate::routing::{Lft, PathSl, Sl2Vl, SwitchSls, ALL_VL0, NUM_SLS};

/// VLs a lane may use: three (two backward turns).
pub const LANE_VLS: u8 = 3;

/// A hop: (switch, in-port, out-port).
type Hop = (SwitchId, PortNum, PortNum);

/// The VL of each hop of the paths on one SL.
type Lane = HashMap<Hop, u8>;

/// What `assign` decided.
pub struct Lanes {
    pub path_sl: PathSl,
    /// `None` when every path is on one SL and VL 0.
    pub sl2vl: Option<Sl2Vl>,
    pub lanes: usize,
    pub reserve_layers: u8,
    pub vls: u8,
}

/// The class of the channel into `s` through `port`, and of the one out.
fn port_classes(
    fabric: &Fabric,
    roles: &Roles,
    s: SwitchId,
    port: PortNum,
) -> Option<(Class, Class)> {
    if port.is_management() {
        return Some((Class::Terminal, Class::Terminal));
    }
    match fabric.graph().peer(s, port)? {
        Peer::Ca(_) => Some((Class::Terminal, Class::Terminal)),
        Peer::Switch { switch, .. } => Some((roles.class(switch, s), roles.class(s, switch))),
    }
}

/// A path's hops with their VLs (the number of backward turns so far).
#[derive(Clone)]
enum PathVls {
    /// No backward turn: every hop on VL 0.
    Flat,
    Turns(Vec<(Hop, u8)>),
    /// More backward turns than a lane has VLs, or the path does not
    /// arrive.
    Unfit,
}

fn path_vls(fabric: &Fabric, roles: &Roles, lfts: &[Lft], s: SwitchId, dlid: Lid) -> PathVls {
    let graph = fabric.graph();
    let mut hops = Vec::with_capacity(8);
    let (mut at, mut came, mut in_port, mut vl) = (s, Class::Terminal, PortNum::MANAGEMENT, 0u8);
    for _ in 0..=graph.switch_count() {
        let out = lfts[at.idx()].get(dlid);
        let Some((_, class)) = (!out.is_no_path())
            .then(|| port_classes(fabric, roles, at, out))
            .flatten()
        else {
            return PathVls::Unfit;
        };
        if backward(came, class) {
            vl += 1;
            if vl >= LANE_VLS {
                return PathVls::Unfit;
            }
        }
        hops.push(((at, in_port, out), vl));
        match graph.peer(at, out) {
            Some(Peer::Switch { switch, port }) if !out.is_management() => {
                (at, came, in_port) = (switch, class, port);
            }
            _ if vl == 0 => return PathVls::Flat,
            _ => return PathVls::Turns(hops),
        }
    }
    PathVls::Unfit
}

/// Lanes, SLs and SL2VL tables for the tables `lfts` (module comment).
pub fn assign(
    fabric: &Fabric,
    roles: &Roles,
    lfts: &[Lft],
    base: u8,
) -> Result<Lanes, (Decline, String)> {
    let graph = fabric.graph();
    let dlids: Vec<(Lid, SwitchId)> = fabric
        .lids()
        .filter_map(|(lid, _)| Some((lid, fabric.lid_switch(lid)?)))
        .collect();
    // Per source switch, its paths that turn backwards or fit no lane.
    let mut per_switch: Vec<Vec<(Lid, PathVls)>> = vec![Vec::new(); graph.switch_count()];
    crate::parallel::for_each_row(&mut per_switch, |s, row| {
        let s = SwitchId::new(s);
        *row = dlids
            .iter()
            .filter(|&&(_, t)| t != s)
            .map(|&(lid, _)| (lid, path_vls(fabric, roles, lfts, s, lid)))
            .filter(|(_, p)| !matches!(p, PathVls::Flat))
            .collect();
    });
    let mut lanes: Vec<Lane> = Vec::new();
    let mut sls = SwitchSls::filled(fabric, base);
    let mut reserve: Vec<(SwitchId, Lid)> = Vec::new();
    let mut lane_vls = 1;
    for (s, row) in graph.ids().zip(&per_switch) {
        for (lid, path) in row {
            let hops = match path {
                PathVls::Turns(hops) => hops,
                _ => {
                    reserve.push((s, *lid));
                    continue;
                }
            };
            let fits = |lane: &Lane| {
                hops.iter()
                    .all(|(hop, vl)| lane.get(hop).is_none_or(|v| v == vl))
            };
            let k = match lanes.iter().position(fits) {
                Some(k) => k,
                None => {
                    lanes.push(Lane::new());
                    lanes.len() - 1
                }
            };
            for &(hop, vl) in hops {
                lanes[k].insert(hop, vl);
                lane_vls = lane_vls.max(vl + 1);
            }
            sls.set(s, *lid, base + 1 + k as u8);
        }
    }
    let first_reserve_sl = base as usize + 1 + lanes.len();
    if first_reserve_sl + usize::from(!reserve.is_empty()) > NUM_SLS {
        return Err((
            Decline::OutOfSls,
            format!(
                "the Dragonfly+'s detours need {} SLs from dla.sl = {base} on; set dla.sl lower",
                1 + lanes.len() + usize::from(!reserve.is_empty())
            ),
        ));
    }
    let budget = (NUM_SLS - first_reserve_sl) as u8;
    let layers = place_paths(fabric, lfts, &reserve, budget).map_err(|e| {
        (
            Decline::TooDamaged,
            format!(
                "{} paths of this damaged Dragonfly+ make more than two backward turns and the SLs left do not \
                 keep them free of credit loops ({e}); the fabric is too damaged for dla",
                reserve.len()
            ),
        )
    })?;
    for (&(s, lid), &layer) in reserve.iter().zip(&layers) {
        sls.set(s, lid, first_reserve_sl as u8 + layer);
    }
    let reserve_layers = layers.iter().max().map_or(0, |&l| l + 1);
    if lanes.is_empty() && reserve.is_empty() {
        return Ok(Lanes {
            path_sl: PathSl::Uniform(base),
            sl2vl: None,
            lanes: 1,
            reserve_layers: 0,
            vls: 1,
        });
    }
    let reserve_sls: Vec<(u8, u8)> = (0..reserve_layers)
        .map(|l| (first_reserve_sl as u8 + l, lane_vls + l))
        .collect();
    Ok(Lanes {
        sl2vl: Some(sl2vl_tables(fabric, base, &lanes, &reserve_sls)),
        path_sl: PathSl::PerSourceSwitch(sls),
        lanes: 1 + lanes.len(),
        reserve_layers,
        vls: lane_vls + reserve_layers,
    })
}

/// Every switch's SL-to-VL tables: the base SL on VL 0 everywhere; on
/// SL base + 1 + k, lane k's VL for each hop it makes (VL 0 for the hops
/// it never makes); on a reserve SL, the layer's VL everywhere. CA ports
/// send every SL in use on VL 0.
fn sl2vl_tables(fabric: &Fabric, base: u8, lanes: &[Lane], reserve: &[(u8, u8)]) -> Sl2Vl {
    let graph = fabric.graph();
    let mut tables = Sl2Vl::new(fabric, ALL_VL0);
    if !reserve.is_empty() {
        for s in graph.ids() {
            let ports = graph.port_slots(s);
            for (i, o) in (0..ports)
                .flat_map(|i| (0..ports).map(move |o| (i, o)))
                .filter(|(i, o)| i != o)
            {
                let (i, o) = (PortNum::new(i as u8), PortNum::new(o as u8));
                let mut table = *tables.switch_table(s, i, o);
                for &(sl, vl) in reserve {
                    table[sl as usize] = vl;
                }
                tables.set_switch(s, i, o, table);
            }
        }
    }
    for (k, lane) in lanes.iter().enumerate() {
        for (&(s, i, o), &vl) in lane {
            let mut table = *tables.switch_table(s, i, o);
            table[base as usize + 1 + k] = vl;
            tables.set_switch(s, i, o, table);
        }
    }
    for sl in (base..=base + lanes.len() as u8).chain(reserve.iter().map(|&(sl, _)| sl)) {
        tables.set_ca(sl, 0);
    }
    tables
}
