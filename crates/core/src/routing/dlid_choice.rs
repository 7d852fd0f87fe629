//! Which destination LID a source should use towards each destination
//! port, for engines whose paths differ per LID offset and depend on the
//! source (mlid's §4.2 path selection). Published as
//! `osmroute-path-select.txt`, and answered by the SA with opensm-patch.

use std::collections::HashMap;

use crate::fabric::Lid;

/// (source base LID, destination base LID) -> the DLID to put in packets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DlidChoice {
    choice: HashMap<(Lid, Lid), Lid>,
}

impl DlidChoice {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, slid: Lid, dlid_base: Lid, dlid: Lid) {
        self.choice.insert((slid, dlid_base), dlid);
    }

    /// The DLID a port with base LID `slid` uses towards the port with
    /// base LID `dlid_base`, if the engine chose one.
    pub fn get(&self, slid: Lid, dlid_base: Lid) -> Option<Lid> {
        self.choice.get(&(slid, dlid_base)).copied()
    }

    pub fn len(&self) -> usize {
        self.choice.len()
    }

    pub fn is_empty(&self) -> bool {
        self.choice.is_empty()
    }

    /// Every (source base LID, destination base LID, DLID), in LID order.
    pub fn entries(&self) -> Vec<(Lid, Lid, Lid)> {
        let mut all: Vec<(Lid, Lid, Lid)> = self.choice.iter().map(|(&(s, b), &d)| (s, b, d)).collect();
        all.sort_unstable();
        all
    }
}
