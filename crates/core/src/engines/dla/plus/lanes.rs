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
//! how many turns a packet has made. But its in- and out-ports tell the
//! *hop type* (class in, class out), so a path is described by the VL of
//! each of its hop types, its *lane*. Paths whose lanes agree on every hop
//! type they share are merged into one SL (base SL + the lane's number);
//! an intact Dragonfly+ has a single lane, all on VL 0. A path that makes
//! the same hop type on two VLs (e.g. a bounce on both sides of its
//! global cable), or more than two backward turns, fits no lane; such
//! paths take reserve layers above the lanes, whole paths on one VL each,
//! placed so that no layer's dependencies close a cycle
//! (`deadlock::layers::place_paths`).

use super::{backward, Class, Roles};
use crate::deadlock::layers::place_paths;
use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchId};
use crate::routing::{Lft, PathSl, Sl2Vl, SlVlTable, SwitchSls, ALL_VL0, NUM_SLS};

/// Hop types: (class in, class out), 4 × 4.
const HOP_TYPES: usize = 16;
const UNSET: u8 = u8::MAX;
/// VLs a lane may use: three (two backward turns).
const LANE_VLS: u8 = 3;

/// The VL of each hop type a path (or a lane of paths) makes, `UNSET`
/// where it makes none.
type Lane = [u8; HOP_TYPES];

fn hop_type(from: Class, to: Class) -> usize {
    from.index() * 4 + to.index()
}

/// What `assign` decided.
pub struct Lanes {
    pub path_sl: PathSl,
    /// `None` when every path is on one SL and VL 0.
    pub sl2vl: Option<crate::routing::Sl2Vl>,
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

/// The lane of the path from switch `s` to `dlid`; `None` when it fits
/// none (a hop type on two VLs, or more than `LANE_VLS` VLs), or does not
/// arrive.
fn path_lane(fabric: &Fabric, roles: &Roles, lfts: &[Lft], s: SwitchId, dlid: Lid) -> Option<Lane> {
    let graph = fabric.graph();
    let mut lane = [UNSET; HOP_TYPES];
    let (mut at, mut came, mut vl) = (s, Class::Terminal, 0u8);
    for _ in 0..=graph.switch_count() {
        let out = lfts[at.idx()].get(dlid);
        if out.is_no_path() {
            return None;
        }
        let (_, class) = port_classes(fabric, roles, at, out)?;
        if backward(came, class) {
            vl += 1;
            if vl >= LANE_VLS {
                return None;
            }
        }
        let slot = &mut lane[hop_type(came, class)];
        if *slot != UNSET && *slot != vl {
            return None;
        }
        *slot = vl;
        match graph.peer(at, out) {
            Some(Peer::Switch { switch, .. }) if !out.is_management() => {
                (at, came) = (switch, class);
            }
            _ => return Some(lane),
        }
    }
    None
}

/// Whether two lanes agree on every hop type both make.
fn compatible(a: &Lane, b: &Lane) -> bool {
    a.iter()
        .zip(b)
        .all(|(&x, &y)| x == UNSET || y == UNSET || x == y)
}

/// Lanes, SLs and SL2VL tables for the tables `lfts` (module comment).
pub fn assign(fabric: &Fabric, roles: &Roles, lfts: &[Lft], base: u8) -> Result<Lanes, String> {
    let graph = fabric.graph();
    let dlids: Vec<(Lid, SwitchId)> = fabric
        .lids()
        .filter_map(|(lid, _)| Some((lid, fabric.lid_switch(lid)?)))
        .collect();
    // Per source switch, the lane of each path (in `dlids` order).
    let mut per_switch: Vec<Vec<Option<Lane>>> = vec![Vec::new(); graph.switch_count()];
    crate::parallel::for_each_row(&mut per_switch, |s, row| {
        let s = SwitchId::new(s);
        *row = dlids
            .iter()
            .map(|&(lid, t)| {
                if t == s {
                    Some([UNSET; HOP_TYPES])
                } else {
                    path_lane(fabric, roles, lfts, s, lid)
                }
            })
            .collect();
    });
    let mut lanes: Vec<Lane> = vec![[UNSET; HOP_TYPES]];
    let mut sls = SwitchSls::filled(fabric, base);
    let mut reserve: Vec<(SwitchId, Lid)> = Vec::new();
    for (s, row) in graph.ids().zip(&per_switch) {
        for (&(lid, _), lane) in dlids.iter().zip(row) {
            let Some(lane) = lane else {
                reserve.push((s, lid));
                continue;
            };
            let k = match lanes.iter().position(|l| compatible(l, lane)) {
                Some(k) => k,
                None => {
                    lanes.push([UNSET; HOP_TYPES]);
                    lanes.len() - 1
                }
            };
            for (have, &want) in lanes[k].iter_mut().zip(lane) {
                if want != UNSET {
                    *have = want;
                }
            }
            sls.set(s, lid, base + k as u8);
        }
    }
    let lane_vls = lanes
        .iter()
        .flatten()
        .filter(|&&v| v != UNSET)
        .max()
        .map_or(0, |&v| v)
        + 1;
    let first_reserve_sl = base as usize + lanes.len();
    if first_reserve_sl + usize::from(!reserve.is_empty()) > NUM_SLS {
        return Err(format!(
            "the Dragonfly+'s detours need {} SLs from dla.sl = {base} on; set dla.sl lower",
            lanes.len() + usize::from(!reserve.is_empty())
        ));
    }
    let budget = (NUM_SLS - first_reserve_sl) as u8;
    let layers = place_paths(fabric, lfts, &reserve, budget).map_err(|e| {
        format!(
            "{} paths of this damaged Dragonfly+ fit no lane and the SLs left do not keep them free of credit \
             loops ({e}); the fabric is too damaged for dla",
            reserve.len()
        )
    })?;
    for (&(s, lid), &layer) in reserve.iter().zip(&layers) {
        sls.set(s, lid, first_reserve_sl as u8 + layer);
    }
    let reserve_layers = layers.iter().max().map_or(0, |&l| l + 1);
    let vls = lane_vls + reserve_layers;
    if lanes.len() == 1 && reserve.is_empty() && lane_vls == 1 {
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
    let sl2vl = sl2vl_tables(fabric, roles, base, &lanes, &reserve_sls);
    let path_sl = if lanes.len() == 1 && reserve.is_empty() {
        PathSl::Uniform(base)
    } else {
        PathSl::PerSourceSwitch(sls)
    };
    Ok(Lanes {
        path_sl,
        sl2vl: Some(sl2vl),
        lanes: lanes.len(),
        reserve_layers,
        vls,
    })
}

/// Every switch's SL-to-VL tables: on lane SL base + k, a hop's VL is
/// lane k's for its hop type (VL 0 for hop types the lane never makes);
/// on a reserve SL, the layer's VL everywhere. CA ports send every SL in
/// use on VL 0.
fn sl2vl_tables(
    fabric: &Fabric,
    roles: &Roles,
    base: u8,
    lanes: &[Lane],
    reserve: &[(u8, u8)],
) -> Sl2Vl {
    let graph = fabric.graph();
    let mut tables = Sl2Vl::new(fabric, ALL_VL0);
    for s in graph.ids() {
        let classes: Vec<Option<(Class, Class)>> = (0..graph.port_slots(s))
            .map(|p| port_classes(fabric, roles, s, PortNum::new(p as u8)))
            .collect();
        for (inp, ic) in classes.iter().enumerate() {
            let Some((came, _)) = ic else { continue };
            for (outp, oc) in classes.iter().enumerate() {
                let Some((_, goes)) = oc else { continue };
                if inp == outp {
                    continue;
                }
                let ht = hop_type(*came, *goes);
                let mut table: SlVlTable = ALL_VL0;
                for (k, lane) in lanes.iter().enumerate() {
                    if lane[ht] != UNSET {
                        table[base as usize + k] = lane[ht];
                    }
                }
                for &(sl, vl) in reserve {
                    table[sl as usize] = vl;
                }
                if table != ALL_VL0 {
                    tables.set_switch(s, PortNum::new(inp as u8), PortNum::new(outp as u8), table);
                }
            }
        }
    }
    for sl in (base..base + lanes.len() as u8).chain(reserve.iter().map(|&(sl, _)| sl)) {
        tables.set_ca(sl, 0);
    }
    tables
}
