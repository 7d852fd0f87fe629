//! A computed `Routing` -> OpenSM's unicast manager structures: each
//! switch's `new_lft` and, where something will read it, the hop table.

use std::collections::HashMap;

use osmroute_core::{Fabric, Lid, Routing, SwitchId, NO_PATH};

use crate::osm::SwitchHandle;

/// Which rows of OpenSM's hop tables a pass fills.
///
/// In OpenSM 3.3.23 the hop tables are read by its own engines (which
/// build their own), by its default multicast tree builder (rows towards
/// switch LIDs: `osm_mcast_mgr.c`) and by the routing dumps (every row:
/// `osm_dump.c`); the SA walks the LFTs. Our engines register
/// `mcast_build_stree`, so OpenSM's tree builder runs only when
/// `OSMROUTE_OPENSM_MULTICAST` removes ours. Each row is a malloc inside
/// OpenSM (a million on a 1,000-switch fabric), so rows nobody reads are
/// not made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HopRows {
    /// Nothing reads them: no dumps, our multicast trees.
    None,
    /// Towards switch LIDs, for OpenSM's own multicast trees.
    SwitchLids,
    /// Towards every LID, for the lid-matrix and LFT dumps.
    AllLids,
}

impl HopRows {
    /// The rows a pass needs: all with OpenSM's routing dumps on, those
    /// towards switches when OpenSM builds the multicast trees.
    pub fn needed(routing_dumps: bool, opensm_builds_trees: bool) -> HopRows {
        if routing_dumps {
            HopRows::AllLids
        } else if opensm_builds_trees {
            HopRows::SwitchLids
        } else {
            HopRows::None
        }
    }
}

/// Writes LFTs, and the hop counts `hop_rows` asks for, into every switch
/// (`switches[s]` is switch id `s` of `fabric`).
pub fn write_tables(
    fabric: &Fabric,
    routing: &Routing,
    switches: &mut [SwitchHandle],
    hop_rows: HopRows,
) -> Result<(), String> {
    let lids: Vec<Lid> = match hop_rows {
        HopRows::None => Vec::new(),
        HopRows::SwitchLids => switch_lids(fabric),
        HopRows::AllLids => fabric.lids().map(|(lid, _)| lid).collect(),
    };
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

/// The LIDs of the switches' own ports.
pub fn switch_lids(fabric: &Fabric) -> Vec<Lid> {
    fabric
        .lids()
        .filter(|(_, owner)| fabric.node(owner.node).is_switch())
        .map(|(lid, _)| lid)
        .collect()
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
