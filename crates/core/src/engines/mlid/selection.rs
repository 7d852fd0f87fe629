//! The path selection (§4.2): which of a destination's LIDs each source
//! uses.

use super::{tree_of, Error};
use crate::fabric::{Fabric, Lid, PortRef};
use crate::routing::DlidChoice;
use crate::topology::gft::GenFatTree;

/// The DLID a source host should use for each destination host (§4.2):
/// (source base LID, destination base LID, DLID), for every ordered pair
/// of host ports.
pub fn path_selection(fabric: &Fabric) -> Result<DlidChoice, Error> {
    Ok(choice_of(fabric, &tree_of(fabric)?))
}

/// §4.2 generalised: a source takes the up-path its own d-mod-k digits
/// name (so the sources of a subtree, whose low digits differ, leave it on
/// disjoint up-paths as the paper's rank within the group does), and the
/// DLID is the offset whose digits added to the destination's give them.
pub(super) fn choice_of(fabric: &Fabric, tree: &GenFatTree) -> DlidChoice {
    let hosts: Vec<(PortRef, Lid, u32, usize)> = fabric
        .end_ports()
        .filter_map(|(at, p)| {
            tree.host_index
                .get(&at)
                .map(|&i| (at, p.lid, p.lid_count(), i))
        })
        .collect();
    let digits: Vec<Vec<usize>> = hosts.iter().map(|h| tree.digits(h.3)).collect();
    let mut out = DlidChoice::new();
    for (i, &(src, slid, _, _)) in hosts.iter().enumerate() {
        for (j, &(dst, dbase, count, _)) in hosts.iter().enumerate() {
            if src.node != dst.node {
                // With fewer LIDs than up-paths, only the heights whose
                // digits the offsets cover whole follow the source; the
                // others keep the destination's (d-mod-k), rather than a
                // blend that is neither.
                let mut span = 1usize;
                let offset: Vec<usize> = digits[i]
                    .iter()
                    .zip(&digits[j])
                    .zip(&tree.radix)
                    .map(|((&s, &d), &r)| {
                        let r = r.max(1);
                        span = span.saturating_mul(r);
                        if span <= count as usize {
                            (s + r - d) % r
                        } else {
                            0
                        }
                    })
                    .collect();
                let offset = tree.compose(&offset) % count as usize;
                out.insert(slid, dbase, dbase.offset(offset as u16));
            }
        }
    }
    out
}
