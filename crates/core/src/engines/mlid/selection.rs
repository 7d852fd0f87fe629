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
/// mod the destination's LID count, p the place of the destination's
/// base-LID root: offset o's chain comes down from the root o places
/// after that one (`balance`), so with a LID per root the source climbs
/// to root r whatever the destination. The sources of a leaf, of a pod,
/// reach one destination over different up-paths (the paper's rank within
/// the group), and a permutation spreads as it does over base LIDs. A
/// rule, not a list: linear in the fabric.
pub(super) fn choice_of(fabric: &Fabric, tree: &GenFatTree, places: &BasePlaces) -> DlidChoice {
    let place: HashMap<Lid, usize> = places.iter().copied().collect();
    DlidChoice::by_source_rank(fabric.end_ports().filter_map(|(at, p)| {
        let rank = *tree.host_index.get(&at)?;
        let count = p.lid_count().max(1) as usize;
        let term = (count - place.get(&p.lid).copied().unwrap_or(0) % count) % count;
        Some((p.lid, rank as u32, term as u32, count as u16))
    }))
}
