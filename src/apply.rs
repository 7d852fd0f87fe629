//! A computed `Routing` -> OpenSM's unicast manager structures: each
//! switch's `new_lft` and the hop table OpenSM's multicast and SA code read.

use osmroute_core::{Fabric, Routing, NO_PATH};

use crate::ffi;
use crate::snapshot::SwitchHandle;

/// Writes LFTs and hop counts into every switch.
///
/// OpenSM's multicast tree builder reads hop counts only towards switch
/// LIDs (osm_mcast_mgr.c, osm_switch_recommend_mcast_path) and the SA walks
/// the LFTs, so those are always filled. Hops towards CA LIDs — nine in ten
/// entries on a Dragonfly, each a malloc inside OpenSM — are read only by
/// the lid-matrix dump, so they are filled only with `all_lids` (when that
/// dump is being written).
///
/// # Safety
/// The handles must be the live switches the routing was computed for,
/// inside OpenSM's routing callbacks.
pub unsafe fn write_tables(
    fabric: &Fabric,
    routing: &Routing,
    switches: &[SwitchHandle],
    all_lids: bool,
) -> Result<(), String> {
    let lids: Vec<u16> = fabric
        .lids()
        .filter(|(_, owner)| all_lids || fabric.node(owner.node).is_switch())
        .map(|(lid, _)| lid)
        .collect();
    let started = std::time::Instant::now();
    let hops = routing.hop_table(fabric, &lids);
    // Non-base LIDs of switches (only with lmc_esp0) -> their base LID.
    let switch_base: std::collections::HashMap<u16, u16> = fabric
        .end_ports()
        .filter(|(at, p)| fabric.node(at.node).is_switch() && p.lid_count() > 1)
        .flat_map(|(_, p)| (1..p.lid_count() as u16).map(move |k| (p.lid + k, p.lid)))
        .collect();
    let hop_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut work: Vec<(SwitchHandle, Option<String>)> = switches.iter().map(|&sw| (sw, None)).collect();
    // Switches are independent (osm_switch_set_hops touches only its own
    // switch, and malloc is thread-safe): write them on all cores.
    osmroute_core::parallel::for_each_row(&mut work, |si, (sw, problem)| {
        let mut len = 0u32;
        let lft = ffi::osmroute_switch_new_lft(sw.0, &mut len);
        if lft.is_null() {
            *problem = Some(format!("switch {si} has no new LFT buffer; OpenSM did not prepare it for routing"));
            return;
        }
        let lft = std::slice::from_raw_parts_mut(lft, len as usize);
        let ours = &routing.lfts[si];
        let n = lft.len().min(ours.len());
        if n < 2 {
            return;
        }
        lft[1..n].copy_from_slice(&ours[1..n]);
        for (&lid, &h) in hops.lids.iter().zip(hops.row(si)) {
            let port = ours[lid as usize];
            if (lid as usize) < n && port != NO_PATH && h != NO_PATH {
                ffi::osm_switch_set_hops(sw.0, lid, port, h);
                // OpenSM looks up hops towards a switch by its base LID
                // and the port the LFT gives (osm_dump.c); with lmc_esp0 a
                // switch's other LIDs may leave by other ports. The base
                // LID's own port keeps the base LID's count.
                if let Some(&base) = switch_base.get(&lid).filter(|&&b| ours[b as usize] != port) {
                    ffi::osm_switch_set_hops(sw.0, base, port, h);
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
///
/// # Safety
/// As `write_tables`; must finish before the routing callback returns.
pub unsafe fn reserve_hop_rows(mut switches: Vec<SwitchHandle>, lids: &[u16]) {
    osmroute_core::parallel::for_each_row(&mut switches, |_, sw| {
        for &lid in lids {
            ffi::osm_switch_set_hops(sw.0, lid, 0, NO_PATH);
        }
    });
}
