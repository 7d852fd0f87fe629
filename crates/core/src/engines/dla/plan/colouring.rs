//! The groups' colours: a middle group's colour must differ from both ends'
//! (its SL says which group is in the middle), so which colouring serves
//! decides which pairs of groups without a cable find a middle group and
//! which switches find a way out. Group i gets colour i mod 3 unless that
//! leaves some pair or switch without a way; then a seeded random search,
//! keeping the colouring that sends least to the reserve layers.

use std::collections::{HashMap, HashSet};

use super::{Plan, COLOURS};
use crate::fabric::{PortNum, SwitchId};
use crate::rng::Rng;

/// Random colourings tried after the last one that sent fewer paths to the
/// reserve layers.
const TRIALS_WITHOUT_GAIN: usize = 30;

/// What a colouring leaves: detour candidates per pair, escapes, whether
/// any path is tagged with a colour, and what goes to the reserve layers.
struct Detours {
    candidates: Vec<Vec<u32>>,
    escapes: HashMap<(SwitchId, usize), (PortNum, u8)>,
    coloured_paths: bool,
    /// Pairs of groups whose traffic no middle group can carry.
    far_pairs: Vec<(usize, usize)>,
    /// (switch, destination group) with no way to its group's cable.
    stranded: HashSet<(SwitchId, usize)>,
}

impl Detours {
    /// How much goes to the reserve layers: a far pair weighs as all its
    /// members, a stranded switch as one.
    fn reserve_weight(&self, plan: &Plan) -> usize {
        self.far_pairs
            .iter()
            .map(|&(a, _)| plan.groups.members[a].len())
            .sum::<usize>()
            + self.stranded.len()
    }
}

impl Plan<'_> {
    /// Colours the groups and lists, for every pair of groups without a
    /// cable, the groups its traffic may cross, and for every switch that
    /// cannot reach the global cable its group uses, its way on. What no
    /// colouring gives a way goes to the reserve layers.
    pub(super) fn plan_detours(&mut self) {
        let g = self.group_count();
        let pairs: Vec<(usize, usize, Vec<u32>)> = (0..g)
            .flat_map(|a| (0..g).map(move |b| (a, b)))
            .filter(|&(a, b)| a != b && self.links(a, b).is_empty())
            .map(|(a, b)| (a, b, self.crossable(a, b)))
            .collect();
        // Group i gets colour i mod 3 unless that leaves some pair or
        // switch without a way; then seeded trials, keeping the colouring
        // that sends least to the reserve layers, until trials stop
        // improving on it. While the default serves, a failure changes no
        // colour, so it moves only the routes that need another way.
        let mut colour: Vec<u8> = (0..g).map(|i| (i % COLOURS as usize) as u8).collect();
        let mut rng = Rng::new(0xd1a);
        let mut best: Option<(usize, Vec<u8>, Detours)> = None;
        let mut since_better = 0;
        // Pairs no middle group is cabled to both of go to the reserve
        // layers whatever the colours.
        let unavoidable = pairs
            .iter()
            .filter(|(_, _, cs)| cs.is_empty())
            .map(|&(a, _, _)| self.groups.members[a].len())
            .sum();
        while since_better < TRIALS_WITHOUT_GAIN {
            let found = self.try_colouring(&colour, &pairs);
            let weight = found.reserve_weight(self);
            since_better += 1;
            if best.as_ref().is_none_or(|(w, _, _)| weight < *w) {
                best = Some((weight, colour.clone(), found));
                since_better = 0;
            }
            if weight == unavoidable {
                break;
            }
            colour
                .iter_mut()
                .for_each(|c| *c = rng.below(COLOURS as usize) as u8);
        }
        let (_, colour, found) = best.expect("at least one colouring is tried");
        self.has_detours = !pairs.is_empty() || found.coloured_paths;
        self.detours = found.candidates;
        self.escapes = found.escapes;
        self.stranded = found.stranded;
        self.colour = colour;
        self.list_own_middles(&pairs);
        self.nearer = self.nearer_groups(&found.far_pairs);
    }

    /// The detour candidates and escapes under `colour`, with the pairs and
    /// switches it leaves without a way.
    fn try_colouring(&self, colour: &[u8], pairs: &[(usize, usize, Vec<u32>)]) -> Detours {
        let g = self.group_count();
        let mut found = Detours {
            candidates: vec![Vec::new(); g * g],
            escapes: HashMap::new(),
            coloured_paths: false,
            far_pairs: Vec::new(),
            stranded: HashSet::new(),
        };
        for (a, b, cs) in pairs {
            let (ca, cb) = (colour[*a], colour[*b]);
            let fit: Vec<u32> = cs
                .iter()
                .copied()
                .filter(|&c| colour[c as usize] != ca && colour[c as usize] != cb)
                .collect();
            if fit.is_empty() {
                found.far_pairs.push((*a, *b));
            }
            found.candidates[a * g + b] = fit;
        }
        for a in 0..g {
            for b in (0..g).filter(|&b| b != a) {
                let direct = !self.links(a, b).is_empty();
                let owners: Vec<SwitchId> = if direct {
                    self.links(a, b).iter().map(|l| l.owner).collect()
                } else {
                    found.candidates[a * g + b]
                        .iter()
                        .flat_map(|&c| {
                            self.links(c as usize, b)
                                .iter()
                                .map(move |onward| (c as usize, onward.owner))
                        })
                        .map(|(c, onward)| self.link_into(a, c, onward).owner)
                        .collect()
                };
                for &s in &self.groups.members[a] {
                    let Some(&owner) = owners
                        .iter()
                        .find(|&&o| o != s && !self.reaches_for_source(s, o))
                    else {
                        continue;
                    };
                    found.coloured_paths = true;
                    if direct && colour[a] != colour[b] && self.two_hop_turn(s, owner) {
                        continue; // its own colour (`fallback`)
                    }
                    match self.escape(s, b, colour) {
                        Some(escape) => {
                            found.escapes.insert((s, b), escape);
                        }
                        None => {
                            found.stranded.insert((s, b));
                        }
                    }
                }
            }
        }
        found.coloured_paths |= !pairs.is_empty();
        found
    }
}
