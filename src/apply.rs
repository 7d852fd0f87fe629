//! A computed `Routing` -> OpenSM's unicast manager structures: each
//! switch's `new_lft` and the hop table OpenSM's multicast and SA code read.

use osmroute_core::{Fabric, Routing, NO_PATH};

use crate::ffi;
use crate::snapshot::SwitchHandle;

/// Writes LFTs and hop counts into every switch.
///
/// # Safety
/// The handles must be the live switches the routing was computed for,
/// inside OpenSM's routing callbacks.
pub unsafe fn write_tables(fabric: &Fabric, routing: &Routing, switches: &[SwitchHandle]) -> Result<(), String> {
    let hops = routing.hop_counts(fabric);
    for (si, sw) in switches.iter().enumerate() {
        let mut len = 0u32;
        let lft = ffi::osmroute_switch_new_lft(sw.0, &mut len);
        if lft.is_null() {
            return Err(format!("switch {si} has no new LFT buffer; OpenSM did not prepare it for routing"));
        }
        let lft = std::slice::from_raw_parts_mut(lft, len as usize);
        let ours = &routing.lfts[si];
        let n = lft.len().min(ours.len());
        if n < 2 {
            continue;
        }
        lft[1..n].copy_from_slice(&ours[1..n]);
        for lid in 1..n {
            let (port, h) = (ours[lid], hops[si][lid]);
            if port != NO_PATH && h != NO_PATH {
                ffi::osm_switch_set_hops(sw.0, lid as u16, port, h);
            }
        }
    }
    Ok(())
}
