//! The SL each path uses: what `path_sl` answers the SA, and what the
//! credit-loop analysis assumes for every route.

use std::collections::HashMap;

use super::sl2vl::NUM_SLS;
use crate::fabric::{Fabric, Lid, SwitchId};

/// The SL a path from source LID to destination LID uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSl {
    /// Every path uses the same SL.
    Uniform(u8),
    /// SL per (source LID, destination LID), e.g. read back from a path-SL
    /// dump; pairs not listed use `default`.
    Pairs {
        default: u8,
        sl: HashMap<(Lid, Lid), u8>,
    },
    /// SL per (source switch, destination LID): with destination-based
    /// tables every port on one switch (the switch itself and its CAs)
    /// takes the same path to a LID, so they share its SL. One byte per
    /// switch and LID keeps this small enough for 16k-host fabrics.
    PerSourceSwitch(SwitchSls),
}

/// The table behind `PathSl::PerSourceSwitch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwitchSls {
    /// Per LID: the switch that owns it or that its CA is cabled to.
    source_switch: Vec<Option<SwitchId>>,
    /// `switch * lids + dlid` -> SL.
    sl: Vec<u8>,
    lids: usize,
}

impl SwitchSls {
    /// Every (switch, LID) at SL 0.
    pub fn new(fabric: &Fabric) -> Self {
        Self::filled(fabric, 0)
    }

    /// Every (switch, LID) at `sl`.
    pub fn filled(fabric: &Fabric, sl: u8) -> Self {
        let lids = fabric.lft_len();
        let mut source_switch = vec![None; lids];
        for (lid, _) in fabric.lids() {
            source_switch[lid] = fabric.lid_switch(lid);
        }
        SwitchSls {
            source_switch,
            sl: vec![sl; fabric.switch_count() * lids],
            lids,
        }
    }

    /// Every switch's row (SL by destination LID), in switch order, for
    /// filling rows on several threads.
    pub fn rows_mut(&mut self) -> impl Iterator<Item = &mut [u8]> {
        self.sl.chunks_mut(self.lids.max(1))
    }

    pub fn set(&mut self, switch: SwitchId, dlid: Lid, sl: u8) {
        self.sl[switch.idx() * self.lids + dlid.idx()] = sl;
    }

    /// Replaces every entry's SL `s` by `f(s)`.
    pub fn map(&mut self, f: impl Fn(u8) -> u8) {
        self.sl.iter_mut().for_each(|s| *s = f(*s));
    }

    pub fn get(&self, switch: SwitchId, dlid: Lid) -> u8 {
        self.sl
            .get(switch.idx() * self.lids + dlid.idx())
            .copied()
            .unwrap_or(0)
    }

    /// SL of the path from `slid` to `dlid`; 0 for LIDs the fabric lacks.
    pub fn sl(&self, slid: Lid, dlid: Lid) -> u8 {
        match self.source_switch.get(slid.idx()).copied().flatten() {
            Some(sw) if dlid.idx() < self.lids => self.get(sw, dlid),
            _ => 0,
        }
    }
}

impl PathSl {
    pub fn sl(&self, slid: Lid, dlid: Lid) -> u8 {
        match self {
            PathSl::Uniform(sl) => *sl,
            PathSl::Pairs { default, sl } => sl.get(&(slid, dlid)).copied().unwrap_or(*default),
            PathSl::PerSourceSwitch(t) => t.sl(slid, dlid),
        }
    }

    /// Whether all ports on one switch use the same SL towards each LID
    /// (so analyses may trace one representative per switch).
    pub fn same_per_switch(&self) -> bool {
        !matches!(self, PathSl::Pairs { .. })
    }

    /// The SLs any path may use, ascending.
    pub fn sls_used(&self) -> Vec<u8> {
        let mut v: Vec<u8> = match self {
            PathSl::Uniform(sl) => vec![*sl],
            PathSl::Pairs { default, sl } => sl
                .values()
                .copied()
                .chain(std::iter::once(*default))
                .collect(),
            PathSl::PerSourceSwitch(t) => {
                let mut seen = [false; NUM_SLS];
                t.sl.iter().for_each(|&s| seen[s as usize & 0xf] = true);
                (0..NUM_SLS as u8).filter(|&s| seen[s as usize]).collect()
            }
        };
        v.sort_unstable();
        v.dedup();
        v
    }
}
