//! Which fabrics layered routes. Its paper (Blach et al., §4) presents the
//! layered multipath scheme for low-diameter networks in general,
//! independent of their structure: Slim Fly (diameter 2), Dragonfly and
//! Flattened Butterfly (3), Xpander-like random graphs, and it sets Slim
//! Fly against two- and three-level fat trees (diameter 4). Its layers
//! add "almost-minimal" paths, one hop longer than the minimal ones, which
//! give diversity where minimal paths are few and short; on fabrics of
//! long paths (tori, hypercubes, long rings) minimal paths are already
//! many and the layers only add VLs and hops. So layered routes any
//! connected fabric of switch diameter at most 4 and declines the rest.

use crate::fabric::{Fabric, SwitchGraph, SwitchId};

/// The largest switch diameter layered routes.
pub const MAX_DIAMETER: u16 = 4;

/// Whether layered's scheme fits the fabric (its switch diameter), or why
/// not.
pub fn recognise(fabric: &Fabric, graph: &SwitchGraph) -> Result<u16, String> {
    let d = graph.diameter();
    if d > MAX_DIAMETER {
        let far = graph
            .ids()
            .flat_map(|s| graph.ids().map(move |t| (s, t)))
            .find(|&(s, t)| graph.dist(s, t) == d);
        let between = far.map_or(String::new(), |(s, t): (SwitchId, SwitchId)| {
            format!(
                " ({} to {})",
                fabric.describe_switch(s),
                fabric.describe_switch(t)
            )
        });
        return Err(format!(
            "its switch diameter is {d}{between}: layered's almost-minimal layers are for low-diameter fabrics (at \
             most {MAX_DIAMETER}); use hxdor on tori and hypercubes, pssp elsewhere"
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::hand_built::{dragonfly_plus, rail_pod};
    use crate::gen;

    fn verdict(mut b: crate::FabricBuilder) -> Result<u16, String> {
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        recognise(&f, f.graph())
    }

    #[test]
    fn low_diameter_fabrics_are_taken_long_ones_declined() {
        for (name, b) in [
            ("slim fly", gen::slimfly::slimfly(5, 1).unwrap()),
            (
                "dragonfly",
                gen::dragonfly::dragonfly(&gen::dragonfly::Params::new(4, 2, 2)).unwrap(),
            ),
            (
                "hyperx 3x3x3",
                gen::hyperx::hyperx(&[3, 3, 3], &[1, 1, 1], 1).unwrap(),
            ),
            ("3-tree", gen::fattree::fattree(4, 3).unwrap()),
            ("dragonfly+", dragonfly_plus(4, 4, 4, 2)),
            ("rail pod", rail_pod(4, 8, 4)),
        ] {
            assert!(verdict(b).is_ok(), "{name}");
        }
        for (name, b) in [
            ("hypercube 6", gen::hyperx::hypercube(6, 1, 1).unwrap()),
            ("torus 6x6", gen::torus::torus(&[6, 6], &[1, 1], 1).unwrap()),
        ] {
            let e = verdict(b).unwrap_err();
            assert!(e.contains("switch diameter is 6"), "{name}: {e}");
        }
    }
}
