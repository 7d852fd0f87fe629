//! The path selection (§4.2): which of a destination's LIDs each source
//! uses.

use std::collections::HashMap;

use super::fill::{route_tree, BasePlaces};
use super::{tree_of, Error, MlidOptions};
use crate::fabric::{Fabric, Lid, SwitchId};
use crate::routing::DlidChoice;
use crate::topology::gft::GenFatTree;

/// The DLID a source host should use for each destination host (§4.2),
/// as `outcome` gives it (routing the fabric with the default options).
pub fn path_selection(fabric: &Fabric) -> Result<DlidChoice, Error> {
    let tree = tree_of(fabric)?;
    let (_, places) = route_tree(fabric, &tree, &MlidOptions::default())?;
    Ok(choice_of(fabric, &tree, &places))
}

/// Whether the rank rule spreads as the base LIDs do by construction:
/// every height's switches cabled alike (as many up- and down-cables
/// each: no cable or switch missing), every up-cable to a parent of its
/// own (no bundles: a root is then one up-path from a leaf, and a rank
/// names the whole path), every leaf with as many CAs, and no CA above
/// the leaves (no host on a spine, no Aggregation Node on a line or spine
/// chip). Elsewhere the rule was measured worse than the base LIDs (300
/// bisections, `osmroute check --dlid-choice`): the small director twin
/// with Aggregation Nodes at lmc 2 .6004 against .6078, PGFT(3; 4,4,3;
/// 1,2,2; 1,2,1) with a host on a top switch at lmc 3 .5739 against
/// .5930 and intact .5763 against .6015 (two cables of a bundle lead to
/// one root: sources of two ranks may share one), FT(8,3) with 5 % of the
/// cables cut at lmc 4 .6924 against .6960. One pass over the cables.
pub(super) fn rank_rule_fits(fabric: &Fabric, tree: &GenFatTree) -> bool {
    let graph = fabric.graph();
    // Per height: the (up-cables, down-cables, CAs) of its first switch.
    let mut shape: Vec<Option<(usize, usize, u32)>> = vec![None; tree.top + 1];
    // Per switch: the last switch whose up-cables reached it (bundles).
    let mut seen_from: Vec<Option<SwitchId>> = vec![None; graph.switch_count()];
    graph.ids().all(|s| {
        let h = tree.height[s.idx()];
        let this = (
            tree.up[s.idx()].len(),
            tree.down[s.idx()].len(),
            graph.hosts(s),
        );
        let alike = shape
            .get_mut(h)
            .is_some_and(|first| *first.get_or_insert(this) == this);
        let no_bundle = tree.up[s.idx()]
            .iter()
            .all(|c| seen_from[c.to.idx()].replace(s) != Some(s));
        alike && (h == 0 || this.2 == 0) && no_bundle
    })
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
/// spread worse than base LIDs, so every source takes the base LID there;
/// so it does on trees the rule does not fit (`rank_rule_fits`).
/// A rule, not a list: linear in the fabric.
pub(super) fn choice_of(fabric: &Fabric, tree: &GenFatTree, places: &BasePlaces) -> DlidChoice {
    let place: HashMap<Lid, usize> = places.places.iter().copied().collect();
    let roots = places.roots.max(1);
    let fits = rank_rule_fits(fabric, tree);
    DlidChoice::by_source_rank(fabric.end_ports().filter_map(|(at, p)| {
        let rank = *tree.host_index.get(&at)?;
        let count = p.lid_count().max(1) as usize;
        let (rank, term) = if fits && places.by_rank && count % roots == 0 {
            let p = place.get(&p.lid).copied().unwrap_or(0) % roots;
            (rank % roots, (roots - p) % roots)
        } else {
            (0, 0)
        };
        Some((p.lid, rank as u32, term as u32, count as u16))
    }))
}
