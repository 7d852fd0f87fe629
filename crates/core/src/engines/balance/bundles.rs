//! Destinations spread over the cables of each bundle of parallel cables,
//! once the switch-level paths are fixed.
//!
//! A LID's traffic leaves a switch by one port, so a bundle's cables fill
//! in whole per-destination chunks: the routes of every host whose path
//! to that LID crosses the switch. Chunks differ (a switch relays its own
//! hosts and those of the switches behind it), and picking each LID's
//! cable as its tree is built, with the chunks still unknown, leaves a
//! bundle's cables uneven (EFI 116 on a Slim Fly q = 5 with doubled
//! cables, whose average load is 104). Which cable of a bundle a LID takes
//! changes no path: the switch after it is the same, and its table is per
//! LID, not per in-port. So once the tables are written, every bundle's
//! LIDs are dealt out again, largest chunk first, each to the cable with
//! the fewest routes (then the fewest LIDs, then the lower port), and the
//! new deal replaces the old where it is more even.
//!
//! Loads carry over between calls, so routing built in rounds (layered's
//! layers) is spread round by round onto what earlier rounds left.

use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchGraph, SwitchId};
use crate::routing::Lft;

/// Routes per channel of the LIDs spread so far.
pub struct BundleSpreader {
    load: Vec<u64>,
}

/// One LID leaving a switch through a bundle: the bundle (slot among the
/// switch's neighbours), its routes there, and its place in the LID list.
#[derive(Clone, Copy)]
struct Item {
    slot: u32,
    routes: u64,
    place: u32,
}

impl BundleSpreader {
    pub fn new(graph: &SwitchGraph) -> Self {
        BundleSpreader {
            load: vec![0; graph.channel_count()],
        }
    }

    /// Whether any two switches share more than one cable (otherwise there
    /// is nothing to spread).
    pub fn has_bundles(graph: &SwitchGraph) -> bool {
        graph
            .ids()
            .any(|s| graph.bundles(s).iter().any(|b| b.len() > 1))
    }

    /// Re-picks, within each bundle, the cable of every LID of `lids`
    /// (routed in `lfts`; every host sends to each) and adds their routes
    /// to the loads. The order of `lids` breaks ties, so the same LIDs in
    /// the same order get the same cables whatever their numbers.
    pub fn spread(&mut self, fabric: &Fabric, lfts: &mut [Lft], lids: &[Lid]) {
        let g = fabric.graph();
        let n = g.switch_count();
        let mut items: Vec<Vec<Item>> = vec![Vec::new(); n];
        let mut routes = vec![0u64; n];
        for (place, &lid) in lids.iter().enumerate() {
            routes_through(fabric, lfts, lid, &mut routes);
            for s in g.ids() {
                let port = lfts[s].get(lid);
                let Some(to) = next_switch(g, s, port) else {
                    continue;
                };
                self.load[g.channel(s, port)] += routes[s.idx()];
                let Some(slot) = g.slot(s, to) else { continue };
                if g.bundles(s)[slot].len() > 1 {
                    items[s.idx()].push(Item {
                        slot: slot as u32,
                        routes: routes[s.idx()],
                        place: place as u32,
                    });
                }
            }
        }
        for s in g.ids() {
            let mut mine = std::mem::take(&mut items[s.idx()]);
            // Largest chunk first, then routing order.
            mine.sort_by_key(|i| (i.slot, std::cmp::Reverse(i.routes), i.place));
            for group in mine.chunk_by(|a, b| a.slot == b.slot) {
                self.deal(g, s, group, lfts, lids);
            }
        }
    }

    /// Deals one bundle's items (sorted largest first) over its cables and
    /// keeps the deal if it is more even than the cables the trees chose.
    fn deal(
        &mut self,
        g: &SwitchGraph,
        s: SwitchId,
        group: &[Item],
        lfts: &mut [Lft],
        lids: &[Lid],
    ) {
        let bundle = &g.bundles(s)[group[0].slot as usize];
        let channels: Vec<usize> = bundle.iter().map(|&p| g.channel(s, p)).collect();
        let before: Vec<u64> = channels.iter().map(|&c| self.load[c]).collect();
        // What earlier calls left on each cable.
        let mut after = before.clone();
        for item in group {
            let port = lfts[s].get(lids[item.place as usize]);
            if let Some(k) = bundle.iter().position(|&p| p == port) {
                after[k] -= item.routes;
            }
        }
        let mut count = vec![0u32; bundle.len()];
        let mut picks: Vec<usize> = Vec::with_capacity(group.len());
        for item in group {
            let k = (0..bundle.len())
                .min_by_key(|&k| (after[k], count[k], k))
                .unwrap_or(0);
            after[k] += item.routes;
            count[k] += 1;
            picks.push(k);
        }
        let unevenness = |load: &[u64]| {
            (
                load.iter().max().copied(),
                load.iter().map(|&l| l * l).sum::<u64>(),
            )
        };
        if unevenness(&after) >= unevenness(&before) {
            return;
        }
        for (item, k) in group.iter().zip(picks) {
            lfts[s].set(lids[item.place as usize], bundle[k]);
        }
        for (&c, load) in channels.iter().zip(after) {
            self.load[c] = load;
        }
    }

    /// Routes per channel so far.
    pub fn load(&self) -> &[u64] {
        &self.load
    }

    /// Most routes on one channel so far.
    pub fn edge_forwarding_index(&self) -> u64 {
        self.load.iter().max().copied().unwrap_or(0)
    }
}

/// The switch behind `port` of `s`, if it is another switch.
fn next_switch(g: &SwitchGraph, s: SwitchId, port: PortNum) -> Option<SwitchId> {
    match g.peer(s, port) {
        Some(Peer::Switch { switch, .. }) if switch != s => Some(switch),
        _ => None,
    }
}

/// Per switch, the host-to-host routes to `lid` that leave it towards the
/// LID (its own hosts' and those relayed), following the tables; none for
/// a switch's own LID (hosts' routes to switches are not counted, as in
/// the trees).
fn routes_through(fabric: &Fabric, lfts: &[Lft], lid: Lid, routes: &mut [u64]) {
    routes.fill(0);
    let g = fabric.graph();
    let to_host = fabric
        .lid_owner(lid)
        .is_some_and(|at| !fabric.node(at.node).is_switch());
    if !to_host {
        return;
    }
    for s in g.ids().filter(|&s| g.hosts(s) > 0) {
        let hosts = u64::from(g.hosts(s));
        let mut at = s;
        // A loop in the tables would otherwise never end.
        for _ in 0..g.switch_count() {
            routes[at.idx()] += hosts;
            match next_switch(g, at, lfts[at].get(lid)) {
                Some(next) => at = next,
                None => break,
            }
        }
    }
}
