//! A computed `Routing` -> OpenSM's unicast manager structures: each
//! switch's `new_lft` and the hop table OpenSM's multicast and SA code read.

use osmroute_core::{Fabric, Lid, Routing, SwitchId, NO_PATH};

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
    let lids: Vec<Lid> = fabric
        .lids()
        .filter(|(_, owner)| all_lids || fabric.node(owner.node).is_switch())
        .map(|(lid, _)| lid)
        .collect();
    let started = std::time::Instant::now();
    let hops = routing.hop_table(fabric, &lids);
    // Non-base LIDs of switches (only with lmc_esp0) -> their base LID.
    let switch_base: std::collections::HashMap<Lid, Lid> = fabric
        .end_ports()
        .filter(|(at, p)| fabric.node(at.node).is_switch() && p.lid_count() > 1)
        .flat_map(|(_, p)| p.lids().skip(1).map(move |lid| (lid, p.lid)))
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
        let ours = routing.lfts[si].as_bytes();
        let n = lft.len().min(ours.len());
        if n < 2 {
            return;
        }
        lft[1..n].copy_from_slice(&ours[1..n]);
        for (&lid, &h) in hops.lids.iter().zip(hops.row(SwitchId::new(si))) {
            let port = routing.lfts[si].get(lid);
            if lid.idx() < n && port != NO_PATH && h != NO_PATH.raw() {
                ffi::osm_switch_set_hops(sw.0, lid.raw(), port.raw(), h);
                // OpenSM looks up hops towards a switch by its base LID
                // and the port the LFT gives (osm_dump.c); with lmc_esp0 a
                // switch's other LIDs may leave by other ports. The base
                // LID's own port keeps the base LID's count.
                if let Some(&base) = switch_base.get(&lid).filter(|&&b| routing.lfts[si].get(b) != port) {
                    ffi::osm_switch_set_hops(sw.0, base.raw(), port.raw(), h);
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

/// Gives the pages of every switch's array of hop-row pointers memory of
/// their own before anything writes to them, on the calling thread alone.
///
/// OpenSM allocates that array zeroed (its malloc + memset compiles to
/// calloc, which leaves fresh pages untouched) and reads it through when
/// clearing hops before each routing pass, so until first written every
/// page is the kernel's shared zero page. The first write then copies it
/// and flushes the TLB of every CPU running one of OpenSM's threads: on a
/// 2,064-switch fabric 76,000 flushes, which cost most of a second while
/// the routing's own threads keep the other CPUs busy. Making the pages
/// private here, before those threads start, takes the same faults with no
/// other CPU to interrupt (and none at all on later passes, when the pages
/// are private already).
///
/// # Safety
/// As `write_tables`; nothing else may touch the arrays meanwhile.
pub unsafe fn prefault_hop_row_pointers(switches: &[SwitchHandle]) {
    let page = usize::try_from(libc::sysconf(libc::_SC_PAGESIZE)).unwrap_or(4096).max(64);
    let per_page = page / std::mem::size_of::<*mut u8>();
    for sw in switches {
        let mut count = 0u32;
        let rows = ffi::osmroute_switch_hop_rows(sw.0, &mut count);
        if rows.is_null() || count == 0 {
            continue;
        }
        let touch = |i: usize| {
            let p = rows.add(i);
            p.write_volatile(p.read_volatile());
        };
        // The whole pages inside the array in one call (the kernel makes
        // them writable without touching their contents), the partial
        // pages at its ends by hand; pointer by pointer where the kernel
        // lacks MADV_POPULATE_WRITE (before Linux 5.14).
        let (start, end) = (rows as usize, rows.add(count as usize) as usize);
        let (inner_start, inner_end) = (start.next_multiple_of(page), end / page * page);
        let populated = inner_end > inner_start
            && libc::madvise(inner_start as *mut libc::c_void, inner_end - inner_start, libc::MADV_POPULATE_WRITE) == 0;
        if populated {
            touch(0);
            touch(count as usize - 1);
        } else {
            (0..count as usize).step_by(per_page).chain([count as usize - 1]).for_each(touch);
        }
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
pub unsafe fn reserve_hop_rows(mut switches: Vec<SwitchHandle>, lids: &[Lid]) {
    osmroute_core::parallel::for_each_row(&mut switches, |_, sw| {
        for &lid in lids {
            ffi::osm_switch_set_hops(sw.0, lid.raw(), 0, NO_PATH.raw());
        }
    });
}
