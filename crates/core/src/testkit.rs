//! The one way unit tests turn a generated `FabricBuilder` into a routable
//! `Fabric`: ports optionally shuffled, LIDs assigned in order with an LMC,
//! and a VL budget (by default what the builder says: 8 data VLs, SL2VL
//! programmed).
//!
//! ```ignore
//! let f = TestFabric::of(fattree(4, 3)?).shuffled(9).lmc(2).vls(1).build();
//! ```

use crate::fabric::{Fabric, FabricBuilder, VlBudget};
use crate::gen;

pub struct TestFabric {
    builder: FabricBuilder,
    lmc: u8,
    budget: Option<VlBudget>,
}

impl TestFabric {
    pub fn of(builder: FabricBuilder) -> TestFabric {
        TestFabric {
            builder,
            lmc: 0,
            budget: None,
        }
    }

    /// Port numbers shuffled with `seed`, so no test leans on the
    /// generator's port order.
    pub fn shuffled(mut self, seed: u64) -> TestFabric {
        self.builder = gen::shuffle_ports(&self.builder, seed);
        self
    }

    /// 2^lmc LIDs per port.
    pub fn lmc(mut self, lmc: u8) -> TestFabric {
        self.lmc = lmc;
        self
    }

    /// `vls` data VLs on every inter-switch link.
    pub fn vls(self, vls: u8) -> TestFabric {
        self.budget(VlBudget {
            data_vls: vls,
            limited_by: format!("the test offers {vls}"),
            ..VlBudget::default()
        })
    }

    /// The VL budget as the SM would set it (e.g. SL2VL not programmed).
    pub fn budget(mut self, budget: VlBudget) -> TestFabric {
        self.budget = Some(budget);
        self
    }

    pub fn build(self) -> Fabric {
        let mut b = self.builder;
        b.assign_lids_sequential(self.lmc)
            .expect("the test fabric's LIDs fit");
        b.set_lmc(self.lmc);
        if let Some(budget) = self.budget {
            b.set_vl_budget(budget);
        }
        b.build().expect("the test fabric is valid")
    }
}
