//! The three-class deadlock avoidance of §5.2 (after Duato): the first,
//! second and third inter-switch hop of every path use disjoint sets of
//! VLs, so every channel dependency goes from a lower class to a higher
//! one and none can close a cycle, however many routing layers there are.
//!
//! A switch knows it makes the first hop when the packet came from a host
//! (or from its own port 0). Second and third hops are told apart by the
//! SL: switches get a proper colouring (neighbours differ), colours are
//! SLs, and a path's SL is the colour of its second switch. A switch that
//! forwards between two inter-switch ports is the second hop iff the SL
//! is its own colour; the third switch is a neighbour of the second, so
//! its colour differs. That needs paths of at most 3 inter-switch hops
//! and at most 16 colours.

use crate::deadlock::vl_layers::{vls_allowed, why_too_few_vls};
use crate::error::{Decline, Error};
use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchId};
use crate::routing::walk::Walk;
use crate::routing::{Lft, PathSl, Routing, Sl2Vl, SlVlTable, SwitchSls, NUM_SLS};

/// The longest path (in inter-switch hops) the scheme can handle.
const MAX_HOPS: usize = 3;

/// A proper colouring by DSatur (most differently coloured neighbours
/// first, then most neighbours, then lowest switch id, i.e. GUID), the
/// lowest free colour each time. Returns the colour of every switch.
pub fn colour_switches(fabric: &Fabric) -> Vec<u8> {
    let graph = fabric.graph();
    let n = graph.switch_count();
    let neighbours: Vec<Vec<usize>> = graph
        .ids()
        .map(|s| graph.neighbours(s).iter().map(|t| t.idx()).collect())
        .collect();
    let mut colour = vec![u8::MAX; n];
    // Per switch, which colours its coloured neighbours have (bit set).
    let mut seen = vec![0u32; n];
    for _ in 0..n {
        let pick = (0..n)
            .filter(|&s| colour[s] == u8::MAX)
            .max_by_key(|&s| {
                (
                    seen[s].count_ones(),
                    neighbours[s].len(),
                    std::cmp::Reverse(s),
                )
            })
            .expect("an uncoloured switch is left");
        let c = (!seen[pick]).trailing_zeros().min(u8::MAX as u32 - 1) as u8;
        colour[pick] = c;
        for &t in &neighbours[pick] {
            if c < 32 {
                seen[t] |= 1 << c;
            }
        }
    }
    colour
}

/// VLs of the three hop classes: `vls` (≥ 3) split into three runs, the
/// first hops (which every multi-switch path takes) getting any spare VL
/// before the second.
fn class_vls(vls: u8) -> [Vec<u8>; 3] {
    let base = vls / 3;
    let extra = vls % 3;
    let sizes = [
        base + u8::from(extra >= 1),
        base + u8::from(extra >= 2),
        base,
    ];
    let mut next = 0;
    sizes.map(|size| {
        let run = (next..next + size).collect();
        next += size;
        run
    })
}

/// The SL-to-VL table of one hop class: SLs spread over its VLs.
fn class_table(vls: &[u8]) -> SlVlTable {
    std::array::from_fn(|sl| vls[sl % vls.len()])
}

/// Inter-switch hops from switch `s` to `dlid` and the second switch on
/// the way (None when the path stays on `s`); None when the tables do not
/// deliver.
fn trace(
    fabric: &Fabric,
    lfts: &[Lft],
    s: SwitchId,
    dlid: Lid,
) -> Option<(usize, Option<SwitchId>)> {
    let path = Walk::from_switch(fabric, lfts, s, dlid)
        .collect_path()
        .ok()?;
    Some((path.len() - 1, path.get(1).map(|hop| hop.switch)))
}

pub fn make_deadlock_free(
    engine: &str,
    fabric: &Fabric,
    lfts: Vec<Lft>,
    max_vls: u8,
) -> Result<Routing, Error> {
    let vls = vls_allowed(engine, fabric, max_vls);
    if vls < 3 {
        return Err(Error::declined(
            engine,
            Decline::TooFewVls,
            format!(
                "the hop-position scheme needs 3 VLs, {vls} are usable ({}); \
                 or set {engine}.deadlock vl_layers",
                why_too_few_vls(engine, fabric, max_vls)
            ),
        ));
    }
    let colour = colour_switches(fabric);
    let colours = colour.iter().copied().max().map_or(0, |c| c as usize + 1);
    if colours > NUM_SLS {
        return Err(Error::declined(
            engine,
            Decline::OutOfSls,
            format!(
                "the hop-position scheme needs a switch colouring with at most {NUM_SLS} colours (one per SL); \
                 the best found has {colours}; set {engine}.deadlock vl_layers"
            ),
        ));
    }
    let graph = fabric.graph();
    let mut sls = SwitchSls::new(fabric);
    let dlids: Vec<Lid> = fabric
        .end_ports()
        .flat_map(|(_, p)| p.lids().collect::<Vec<_>>())
        .collect();
    let mut too_long = (0usize, None);
    for s in graph.ids() {
        for &dlid in &dlids {
            let (hops, second) = trace(fabric, &lfts, s, dlid).ok_or_else(|| {
                Error::declined(
                    engine,
                    Decline::Internal,
                    format!(
                        "internal error: the computed tables do not deliver LID {dlid} from {}",
                        fabric.describe_switch(s)
                    ),
                )
            })?;
            if hops > MAX_HOPS {
                too_long.0 += 1;
                too_long.1.get_or_insert((s, dlid, hops));
            }
            sls.set(s, dlid, second.map_or(0, |t| colour[t.idx()]));
        }
    }
    if let (count, Some((s, dlid, hops))) = too_long {
        return Err(Error::declined(
            engine,
            Decline::PathsTooLong,
            format!(
                "the hop-position scheme handles paths of at most {MAX_HOPS} switch hops, but {count} paths are longer \
                 (e.g. {hops} hops from {} to LID {dlid}); the fabric's diameter must be at most 2 \
                 (a Slim Fly's is); set {engine}.deadlock vl_layers",
                fabric.describe_switch(s)
            ),
        ));
    }
    let [first, second, third] = class_vls(vls);
    let first_table = class_table(&first);
    let mut sl2vl = Sl2Vl::new(fabric, first_table);
    for s in graph.ids() {
        let ports = graph.peers(s);
        let mine = colour[s.idx()] as usize;
        let transit: SlVlTable = std::array::from_fn(|sl| {
            if sl == mine {
                second[sl % second.len()]
            } else {
                third[sl % third.len()]
            }
        });
        let links: Vec<PortNum> = (1..ports.len())
            .filter(|&p| matches!(ports[p], Some(Peer::Switch { .. })))
            .map(|p| PortNum::new(p as u8))
            .collect();
        for &i in &links {
            for &o in &links {
                sl2vl.set_switch(s, i, o, transit);
            }
        }
    }
    for sl in 0..NUM_SLS as u8 {
        sl2vl.set_ca(sl, first_table[sl as usize]);
    }
    // "deadlock removal needed N" is what `osmroute compare` reads.
    log::info!(
        "{engine}: hop-position deadlock removal needed 3 VLs (one per hop class), spread over {vls}: \
         VLs {first:?} / {second:?} / {third:?} for first / second / third hops; {colours} switch colours = SLs"
    );
    Ok(Routing {
        engine: engine.to_string(),
        lfts,
        sl2vl: Some(sl2vl),
        path_sl: PathSl::PerSourceSwitch(sls),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_disjoint_and_cover_the_vls() {
        for vls in 3..=15u8 {
            let classes = class_vls(vls);
            let all: Vec<u8> = classes.iter().flatten().copied().collect();
            assert_eq!(all, (0..vls).collect::<Vec<_>>());
            assert!(classes.iter().all(|c| !c.is_empty()));
        }
        assert_eq!(class_vls(4), [vec![0, 1], vec![2], vec![3]]);
    }
}
