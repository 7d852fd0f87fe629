//! Which destination LID a source should use towards each destination
//! port, for engines whose paths differ per LID offset and depend on the
//! source. Two forms: a table of (source, destination) pairs (mlid's §4.2
//! path selection, published as `osmroute-path-select.txt`), or a rule
//! over host ranks (layered's spreading, too many pairs to list on a big
//! Slim Fly). With opensm-patch the SA answers PathRecords with either.

use std::collections::HashMap;

use crate::fabric::Lid;

/// (source base LID, destination base LID) -> the DLID to put in packets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DlidChoice {
    choice: HashMap<(Lid, Lid), Lid>,
    spread: Option<RankSpread>,
}

/// Source and destination hosts spread over the destination's LIDs by
/// rank: host ranks number the host ports in base-LID order, and a source
/// of rank r uses offset (r + the destination's rank) mod its LID count.
/// So the sources that send to one destination use its LIDs in turn, and
/// one source uses them in turn over its destinations.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RankSpread {
    /// Base LID -> (rank as a source, term as a destination, LID count).
    hosts: HashMap<Lid, (u32, u32, u16)>,
    /// Whether the term is the destination's rank (layered's rule, not
    /// written out) or given per host (mlid's, written one line per host).
    with_destination: bool,
}

impl DlidChoice {
    pub fn new() -> Self {
        Self::default()
    }

    /// The rank rule (see `RankSpread`) over host ports given as (base
    /// LID, LID count), in any order.
    pub fn spread_by_rank(hosts: impl IntoIterator<Item = (Lid, u16)>) -> Self {
        let mut sorted: Vec<(Lid, u16)> = hosts.into_iter().collect();
        sorted.sort_unstable();
        sorted.dedup_by_key(|h| h.0);
        let hosts = sorted
            .into_iter()
            .enumerate()
            .map(|(rank, (lid, count))| (lid, (rank as u32, rank as u32, count)))
            .collect();
        DlidChoice {
            choice: HashMap::new(),
            spread: Some(RankSpread {
                hosts,
                with_destination: true,
            }),
        }
    }

    /// A source of rank r uses offset (r + t) mod the destination's LID
    /// count, t the destination's term; hosts given as (base LID, rank,
    /// term, LID count).
    pub fn by_source_rank(hosts: impl IntoIterator<Item = (Lid, u32, u32, u16)>) -> Self {
        DlidChoice {
            choice: HashMap::new(),
            spread: Some(RankSpread {
                hosts: hosts
                    .into_iter()
                    .map(|(lid, rank, term, count)| (lid, (rank, term, count)))
                    .collect(),
                with_destination: false,
            }),
        }
    }

    /// The hosts of a `by_source_rank` rule, as (base LID, rank, term, LID
    /// count) in LID order; `None` for other choices.
    pub fn source_ranks(&self) -> Option<Vec<(Lid, u32, u32, u16)>> {
        let spread = self.spread.as_ref().filter(|s| !s.with_destination)?;
        let mut all: Vec<(Lid, u32, u32, u16)> = spread
            .hosts
            .iter()
            .map(|(&lid, &(rank, term, count))| (lid, rank, term, count))
            .collect();
        all.sort_unstable();
        Some(all)
    }

    pub fn insert(&mut self, slid: Lid, dlid_base: Lid, dlid: Lid) {
        self.choice.insert((slid, dlid_base), dlid);
    }

    /// The DLID a port with base LID `slid` uses towards the port with
    /// base LID `dlid_base`, if the engine chose one.
    pub fn get(&self, slid: Lid, dlid_base: Lid) -> Option<Lid> {
        if let Some(&dlid) = self.choice.get(&(slid, dlid_base)) {
            return Some(dlid);
        }
        let spread = self.spread.as_ref()?;
        let (&(src_rank, _, _), &(_, dst_term, count)) =
            (spread.hosts.get(&slid)?, spread.hosts.get(&dlid_base)?);
        if slid == dlid_base || count == 0 {
            return None;
        }
        let offset = (src_rank as u64 + dst_term as u64) % count as u64;
        Some(dlid_base.offset(offset as u16))
    }

    /// Whether every choice is listed pair by pair (what
    /// `osmroute-path-select.txt` holds), rather than given by a rule.
    pub fn is_listed(&self) -> bool {
        self.spread.is_none()
    }

    /// Listed pairs.
    pub fn len(&self) -> usize {
        self.choice.len()
    }

    pub fn is_empty(&self) -> bool {
        self.choice.is_empty() && self.spread.is_none()
    }

    /// Every listed (source base LID, destination base LID, DLID), in LID
    /// order.
    pub fn entries(&self) -> Vec<(Lid, Lid, Lid)> {
        let mut all: Vec<(Lid, Lid, Lid)> =
            self.choice.iter().map(|(&(s, b), &d)| (s, b, d)).collect();
        all.sort_unstable();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_spread_turns_over_the_destinations_lids() {
        let l = Lid::from_raw;
        // Four hosts with 4 LIDs each, given out of order.
        let choice = DlidChoice::spread_by_rank([(l(12), 4), (l(4), 4), (l(16), 4), (l(8), 4)]);
        assert!(!choice.is_listed());
        // Ranks: 4 -> 0, 8 -> 1, 12 -> 2, 16 -> 3.
        assert_eq!(choice.get(l(4), l(8)), Some(l(9)));
        assert_eq!(choice.get(l(12), l(8)), Some(l(11)));
        assert_eq!(choice.get(l(16), l(8)), Some(l(8)));
        // The sources of one destination use all its LIDs.
        let used: std::collections::BTreeSet<Lid> = [4, 12, 16]
            .iter()
            .filter_map(|&s| choice.get(l(s), l(8)))
            .collect();
        assert_eq!(used.len(), 3);
        assert_eq!(choice.get(l(8), l(8)), None, "no choice towards oneself");
        assert_eq!(choice.get(l(5), l(8)), None, "5 is no host's base LID");
    }

    #[test]
    fn listed_pairs_win_over_nothing() {
        let l = Lid::from_raw;
        let mut choice = DlidChoice::new();
        assert!(choice.is_listed() && choice.is_empty());
        choice.insert(l(4), l(8), l(10));
        assert_eq!(choice.get(l(4), l(8)), Some(l(10)));
        assert_eq!(choice.get(l(8), l(4)), None);
    }
}
