//! The path selection (§4.2): which of a destination's LIDs each source
//! uses.

use std::collections::HashMap;

use super::fill::{route_tree, BasePlaces};
use super::{tree_of, Error, MlidOptions};
use crate::fabric::{Fabric, Lid};
use crate::routing::DlidChoice;
use crate::topology::gft::GenFatTree;

/// The DLID a source host should use for each destination host (§4.2),
/// as `outcome` gives it (routing the fabric with the default options).
pub fn path_selection(fabric: &Fabric) -> Result<DlidChoice, Error> {
    let tree = tree_of(fabric)?;
    let (_, places) = route_tree(fabric, &tree, &MlidOptions::default())?;
    Ok(choice_of(fabric, &tree, &places))
}

/// §4.2 generalised: a source of rank r (its place in the tree's host
/// order, where a subtree's hosts are consecutive) uses offset (r − p)
/// mod R towards a destination whose base-LID root has place p among the
/// R roots: offset o's chain comes down from the root o places after that
/// one (`balance`), so the source climbs to root r mod R whatever the
/// destination. The sources of a leaf, of a pod, reach one destination
/// over different up-paths (the paper's rank within the group), and a
/// permutation spreads as over base LIDs (source- instead of
/// destination-based). That needs a LID per root, a multiple of R LIDs
/// (offsets R apart reach the same root); with fewer, or a count R does
/// not divide, offsets would wrap onto other roots per destination and
/// spread worse than base LIDs, so every source takes the base LID there.
/// A rule, not a list: linear in the fabric.
pub(super) fn choice_of(fabric: &Fabric, tree: &GenFatTree, places: &BasePlaces) -> DlidChoice {
    let place: HashMap<Lid, usize> = places.places.iter().copied().collect();
    let roots = places.roots.max(1);
    DlidChoice::by_source_rank(fabric.end_ports().filter_map(|(at, p)| {
        let rank = *tree.host_index.get(&at)?;
        let count = p.lid_count().max(1) as usize;
        let (rank, term) = if places.by_rank && count % roots == 0 {
            let p = place.get(&p.lid).copied().unwrap_or(0) % roots;
            (rank % roots, (roots - p) % roots)
        } else {
            (0, 0)
        };
        Some((p.lid, rank as u32, term as u32, count as u16))
    }))
}
