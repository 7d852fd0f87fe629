//! A computed `Routing` -> OpenSM's unicast manager structures: each
//! switch's `new_lft` and the hop table OpenSM's multicast and SA code read.

use std::collections::HashMap;

use osmroute_core::{Fabric, Lid, Routing, SwitchId, NO_PATH};

use crate::osm::SwitchHandle;

/// Writes LFTs and hop counts into every switch (`switches[s]` is switch
/// id `s` of `fabric`).
///
/// OpenSM's multicast tree builder reads hop counts only towards switch
/// LIDs (osm_mcast_mgr.c, osm_switch_recommend_mcast_path) and the SA walks
/// the LFTs, so those are always filled. Hops towards CA LIDs — nine in ten
/// entries on a Dragonfly, each a malloc inside OpenSM — are read only by
/// the lid-matrix dump, so they are filled only with `all_lids` (when that
/// dump is being written).
pub fn write_tables(
    fabric: &Fabric,
    routing: &Routing,
    switches: &mut [SwitchHandle],
    all_lids: bool,
) -> Result<(), String> {
    let lids: Vec<Lid> = fabric
        .lids()
        .filter(|(_, owner)| all_lids || fabric.node(owner.node).is_switch())
        .map(|(lid, _)| lid)
        .collect();
    let started = std::time::Instant::now();
    let hops = routing.hop_table(fabric, &lids);
    // Non-base LIDs of switches (only with lmc_esp0) -> their base LID.
    let switch_base: HashMap<Lid, Lid> = fabric
        .end_ports()
        .filter(|(at, p)| fabric.node(at.node).is_switch() && p.lid_count() > 1)
        .flat_map(|(_, p)| p.lids().skip(1).map(move |lid| (lid, p.lid)))
        .collect();
    let hop_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut work: Vec<(&mut SwitchHandle, Option<String>)> =
        switches.iter_mut().map(|sw| (sw, None)).collect();
    // Switches are independent (osm_switch_set_hops touches only its own
    // switch, and malloc is thread-safe): write them on all cores.
    osmroute_core::parallel::for_each_row(&mut work, |si, (sw, problem)| {
        let si = SwitchId::new(si);
        let ours = &routing.lfts[si];
        let Some(lft) = sw.new_lft() else {
            *problem = Some(format!(
                "{si} has no new LFT buffer; OpenSM did not prepare it for routing"
            ));
            return;
        };
        let n = lft.len().min(ours.len());
        if n < 2 {
            return;
        }
        lft[1..n].copy_from_slice(&ours.as_bytes()[1..n]);
        for (&lid, &h) in hops.lids.iter().zip(hops.row(si)) {
            let port = ours.get(lid);
            if lid.idx() < n && port != NO_PATH && h != NO_PATH.raw() {
                sw.set_hops(lid.raw(), port.raw(), h);
                // OpenSM looks up hops towards a switch by its base LID
                // and the port the LFT gives (osm_dump.c); with lmc_esp0 a
                // switch's other LIDs may leave by other ports. The base
                // LID's own port keeps the base LID's count.
                if let Some(&base) = switch_base.get(&lid).filter(|&&b| ours.get(b) != port) {
                    sw.set_hops(base.raw(), port.raw(), h);
                }
            }
        }
    });
    log::debug!(
        "hop table for {} LIDs in {hop_ms:.1} ms; LFTs and hops written in {:.1} ms",
        lids.len(),
        started.elapsed().as_secs_f64() * 1e3 - hop_ms
    );
    match work.into_iter().find_map(|(_, problem)| problem) {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// Makes OpenSM allocate its hop-table rows towards `lids` on every switch,
/// leaving them empty (all `OSM_NO_PATH`, exactly the state OpenSM clears
/// them to before each routing pass).
///
/// OpenSM mallocs one row per switch and LID on first use; on a 2,064-switch
/// fabric that is four million allocations and most of the write-back time.
/// Doing it on a second thread while the routing is being computed takes it
/// off the critical path; `write_tables` then only stores into the rows.
pub fn reserve_hop_rows(switches: &mut [SwitchHandle], lids: &[Lid]) {
    osmroute_core::parallel::for_each_row(switches, |_, sw| {
        for &lid in lids {
            sw.set_hops(lid.raw(), 0, NO_PATH.raw());
        }
    });
}
