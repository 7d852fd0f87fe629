//! How many LIDs per host the tree asks for, and how many fit.

use crate::fabric::Fabric;
use crate::topology::gft::GenFatTree;

/// The LMC the tree asks for and the LMC to configure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LmcPlan {
    /// log2(up-paths from a leaf to the top), rounded up, at most 7.
    pub needed: u8,
    /// `needed`, or the largest LMC whose LIDs fit the LID space.
    pub target: u8,
    pub max_lid: u16,
}

impl LmcPlan {
    /// `max_lid`: the highest LID the switches' tables hold. OpenSM aligns
    /// every multi-LID range to 2^LMC, so a switch's single LID between two
    /// hosts' ranges can cost up to 2^LMC LIDs: counted as that, to be safe.
    pub fn new(tree: &GenFatTree, switches: usize, max_lid: u16) -> Self {
        let needed = (tree
            .paths()
            .min(1 << 7)
            .next_power_of_two()
            .trailing_zeros() as u8)
            .min(7);
        let ports = tree.hosts() + switches;
        let fits = |lmc: u8| ports << lmc <= max_lid as usize;
        let target = (0..=needed).rev().find(|&l| fits(l)).unwrap_or(0);
        LmcPlan {
            needed,
            target,
            max_lid,
        }
    }

    /// Why `target` is below `needed`, if it is.
    pub fn limit_note(&self, tree: &GenFatTree) -> Option<String> {
        (self.target < self.needed).then(|| {
            format!(
                "LMC {} ({} LIDs per host) would need up to {} LIDs, more than the {} the switches' \
                 forwarding tables hold; LMC {} is the largest that fits",
                self.needed,
                1u32 << self.needed,
                tree.hosts() << self.needed,
                self.max_lid,
                self.target
            )
        })
    }
}

pub(super) fn lmc_for(fabric: &Fabric, tree: &GenFatTree) -> Option<u8> {
    let plan = LmcPlan::new(tree, fabric.switch_count(), fabric.max_unicast_lid());
    (fabric.lmc() < plan.target).then_some(plan.target)
}
