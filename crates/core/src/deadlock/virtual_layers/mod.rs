//! The virtual-layer deadlock removal as engines apply it to their tables:
//! how many VLs it may use, the SL-to-VL tables (SL i on VL i), and the
//! decline messages that say which setting to change.

pub mod placement;

use crate::config::{ConfigError, OptionSpec, Section};
use crate::error::{Decline, Error};
use crate::fabric::{Fabric, Lid};
use crate::routing::{Lft, PathSl, Routing, Sl2Vl, SlVlTable, NUM_SLS};
use placement::{assign_layers, LayerOptions, LayeringError};

const MAX_VLS: OptionSpec = OptionSpec {
    key: "max_vls",
    default: "0",
    help:
        "most VLs (= virtual layers = SLs) the deadlock removal may use; 0: what the fabric offers \
           (OpenSM's max_op_vls, the ports' VL capability; 1 with qos FALSE)",
};
/// Off by default: spreading fills every VL the fabric offers, and the VLs
/// an operator keeps for QoS would be gone.
const BALANCE_VLS: OptionSpec = OptionSpec {
    key: "balance_vls",
    default: "FALSE",
    help: "spread paths over the layers the removal left free (off: as few VLs as the layering needs, \
           the others stay free for QoS)",
};
const BEST_EFFORT: OptionSpec = OptionSpec {
    key: "best_effort",
    default: "FALSE",
    help:
        "when layers run out, route anyway (loud ERR line: not deadlock-free) instead of declining",
};
/// For engines whose multicast trees are checked against their unicast
/// (`multicast::verified`): SL 0, OpenSM's default SL and the IPoIB
/// broadcast group's, gets a VL no unicast path uses, so the check passes
/// there whatever the layering.
pub const MULTICAST_VL: OptionSpec = OptionSpec {
    key: "multicast_vl",
    default: "TRUE",
    help: "when the layering needs 2 or more VLs and one more is available: unicast on SLs/VLs 1.., VL 0 \
           kept for multicast on SL 0 (the IPoIB broadcast group), whose trees are then checked loop-free",
};

/// On by default: where SL 0 shares VL 0 with unicast, groups on SL 0
/// (the IPoIB broadcast group) get a tree free of credit loops by
/// construction, for a second placement per routing pass.
const MULTICAST_TREE: OptionSpec = OptionSpec {
    key: "multicast_tree",
    default: "TRUE",
    help: "where SL 0 shares VL 0 with unicast layer 0 (no VL left for a multicast VL): place unicast \
           again, within as many layers, around a multicast master tree in every layer it fits around, \
           layer 0 first, so that SL-0 groups (and those on the other layers' SLs) get that tree \
           loop-free (FALSE: one placement; such groups get trees only where the check finds one)",
};

/// The options of the virtual-layer pass, under the section of the engine
/// that uses it (`MULTICAST_VL` besides, for engines that offer it).
pub const OPTIONS: &[OptionSpec] = &[MAX_VLS, BALANCE_VLS, BEST_EFFORT, MULTICAST_TREE];

/// Options of the virtual-layer deadlock removal. The default is what
/// `read` gives without settings: every VL the fabric offers, as few used
/// as the layering needs, paths placed around the multicast tree, no
/// multicast VL (engines that offer `MULTICAST_VL` turn it on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayeringOptions {
    /// Most VLs (= virtual layers = SLs) the deadlock removal may use; 0
    /// means what the fabric offers (its operational data VLs).
    pub max_vls: u8,
    /// Spread paths over the VLs left free after deadlock removal.
    pub balance_vls: bool,
    /// When the layers run out, route the remaining paths in the last one
    /// anyway (logging loudly that deadlock freedom is not guaranteed)
    /// instead of declining.
    pub best_effort: bool,
    /// Unicast on SLs 1.. (VL = SL), SL 0 alone on VL 0 for multicast,
    /// when the layering needs two or more layers and one more VL is
    /// available (`MULTICAST_VL`).
    pub multicast_vl: bool,
    /// Where SL 0 shares VL 0 with unicast, place paths around the
    /// multicast master tree as well, within the layers the plain
    /// layering needs (`MULTICAST_TREE`).
    pub multicast_tree: bool,
    /// Most layerings around candidate trees per pass
    /// (`around_the_multicast_tree`): 1 tries the first candidate with
    /// every layer seeded; pssp and layered, whose routing-time check
    /// tries every candidate, may try them all (`MAX_TREE_TRIES`).
    pub tree_tries: usize,
}

impl Default for LayeringOptions {
    fn default() -> Self {
        LayeringOptions {
            max_vls: 0,
            balance_vls: false,
            best_effort: false,
            multicast_vl: false,
            multicast_tree: true,
            tree_tries: 1,
        }
    }
}

impl LayeringOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        Ok(LayeringOptions {
            max_vls: s.number(&MAX_VLS, 0, 15)?,
            balance_vls: s.flag(&BALANCE_VLS)?,
            best_effort: s.flag(&BEST_EFFORT)?,
            multicast_vl: false,
            multicast_tree: s.flag(&MULTICAST_TREE)?,
            tree_tries: 1,
        })
    }

    /// The defaults of pssp and layered: VL 0 kept for multicast where
    /// there is room, and where there is none, unicast placed around
    /// every candidate tree it may take.
    pub fn with_multicast_vl() -> Self {
        LayeringOptions {
            multicast_vl: true,
            tree_tries: MAX_TREE_TRIES,
            ..Self::default()
        }
    }

    /// `read` for pssp and layered, which list `MULTICAST_VL` too (the
    /// defaults of `with_multicast_vl`).
    pub fn read_with_multicast_vl(s: &Section) -> Result<Self, ConfigError> {
        Ok(LayeringOptions {
            multicast_vl: s.flag(&MULTICAST_VL)?,
            tree_tries: MAX_TREE_TRIES,
            ..Self::read(s)?
        })
    }
}

/// The VLs `engine` may use: what the fabric offers, bounded by the
/// engine's `max_vls` option (0: no bound).
pub fn vls_allowed(engine: &str, fabric: &Fabric, max_vls: u8) -> u8 {
    let usable = fabric.vl_budget().usable();
    if max_vls == 0 {
        return usable;
    }
    if max_vls > usable {
        log::warn!("{engine}: {engine}.max_vls {max_vls} is more than the {usable} VLs available; using {usable}");
    }
    usable.min(max_vls)
}

/// Why a routing needing more VLs than `allowed` cannot have them, and
/// what to change: the QoS setting, the engine's `max_vls`, or the fabric.
pub fn why_too_few_vls(engine: &str, fabric: &Fabric, max_vls: u8) -> String {
    let budget = fabric.vl_budget();
    if !budget.sl2vl_programmed {
        "OpenSM programs SL2VL tables only with QoS on: set `qos TRUE` in opensm.conf".to_string()
    } else if max_vls > 0 && max_vls < budget.usable() {
        format!(
            "{engine}.max_vls is {max_vls}: raise it (the fabric offers {})",
            budget.usable()
        )
    } else {
        format!(
            "the fabric offers {}: {}",
            budget.data_vls, budget.limited_by
        )
    }
}

/// SL i on VL i for the first `layers` SLs, VL 0 for the rest.
pub(crate) fn layer_table(layers: u8) -> SlVlTable {
    std::array::from_fn(|sl| if sl < layers as usize { sl as u8 } else { 0 })
}

/// Puts every path of `lfts` (source switch → LID, placed in `lid_order`)
/// on a virtual layer so that no layer has a credit loop, and builds the
/// routing: path SL = layer, SL i on VL i everywhere. With
/// `opts.multicast_vl`, a layering of two or more layers that leaves a VL
/// free goes on SLs 1.. instead (see `MulticastVl`).
pub fn make_deadlock_free(
    engine: &str,
    fabric: &Fabric,
    lfts: Vec<Lft>,
    lid_order: &[Lid],
    opts: &LayeringOptions,
) -> Result<Routing, Error> {
    let max_layers = vls_allowed(engine, fabric, opts.max_vls);
    let layer_opts = LayerOptions {
        max_layers,
        balance: opts.balance_vls,
        // Spreading stops one short, so the multicast VL stays possible.
        balance_limit: if opts.multicast_vl {
            max_layers.saturating_sub(1).max(1)
        } else {
            max_layers
        },
        best_effort: opts.best_effort,
        seed: Vec::new(),
        seed_layer: None,
    };
    let mut layering = around_the_multicast_tree(
        engine,
        fabric,
        &lfts,
        lid_order,
        layer_opts,
        opts,
    )
    .map_err(|e| match e {
            LayeringError::OutOfLayers { .. } => Error::declined(
                engine,
                Decline::TooFewVls,
                format!(
                "{e}; {}, or set {engine}.best_effort TRUE to route anyway without deadlock freedom",
                why_too_few_vls(engine, fabric, opts.max_vls)
            ),
            ),
            LayeringError::Undeliverable { switch, dlid } => Error::declined(
                engine,
                Decline::Internal,
                format!(
                    "internal error: the computed tables do not deliver LID {dlid} from {}",
                    fabric.describe_switch(switch)
                ),
            ),
        })?;
    if layering.unplaced_paths > 0 {
        log::error!(
            "{engine}: BEST EFFORT: {} of {} paths fit in no virtual layer and share the last one; \
             this routing is NOT guaranteed deadlock-free ({engine}.best_effort is TRUE)",
            layering.unplaced_paths,
            layering.paths
        );
    }
    log::info!(
        "{engine}: deadlock removal needed {} virtual layers, paths spread over {}; the multicast tree's turns \
         are in layers {:?}",
        layering.layers_needed,
        layering.layers_used,
        (0..layering.layers_used)
            .filter(|&l| layering.seeded & (1 << l) != 0)
            .collect::<Vec<_>>()
    );
    if layering.layers_used <= 1 {
        return Ok(Routing {
            engine: engine.to_string(),
            lfts,
            sl2vl: None,
            path_sl: PathSl::Uniform(0),
        });
    }
    let sls_used = match MulticastVl::decide(opts.multicast_vl, layering.layers_used, max_layers) {
        MulticastVl::Kept => {
            layering.sls.map(|layer| layer + 1);
            log::info!(
                "{engine}: unicast on SLs/VLs 1-{}; VL 0 carries only SL 0 (multicast, e.g. the IPoIB broadcast group)",
                layering.layers_used
            );
            layering.layers_used + 1
        }
        MulticastVl::NoRoom => {
            log::warn!(
                "{engine}: the layering needs all {max_layers} VLs allowed, none left for multicast on SL 0: \
                 SL-0 groups (the IPoIB broadcast group) share VL 0 with unicast layer 0 ({})",
                why_too_few_vls(engine, fabric, opts.max_vls)
            );
            layering.layers_used
        }
        MulticastVl::Off => layering.layers_used,
    };
    let table = layer_table(sls_used);
    let mut sl2vl = Sl2Vl::new(fabric, table);
    for sl in 0..NUM_SLS as u8 {
        sl2vl.set_ca(sl, table[sl as usize]);
    }
    Ok(Routing {
        engine: engine.to_string(),
        lfts,
        sl2vl: Some(sl2vl),
        path_sl: PathSl::PerSourceSwitch(layering.sls),
    })
}

/// Most layerings `around_the_multicast_tree` makes beside the plain one
/// (each costs about what the plain one does): enough for the tries that
/// kept a tree on the generators' tight fabrics (11 on the Dragonfly
/// a=8, h=4, p=4, 8 on the random 100-switch one), a bound where none can.
const MAX_TREE_TRIES: usize = 16;

/// The layering, and where SL 0 then shares VL 0 with unicast layer 0
/// (no VL left for `multicast_vl`, or it is off, or one layer) and
/// `multicast_tree` is on, a second one within as many layers around a
/// multicast master tree's turns (`multicast::verified::layering_seeds`,
/// in the order the routing-time check tries the trees): a path that
/// would close a cycle with the tree goes to another layer. The tree then
/// passes the check on the SLs of the layers that kept it by
/// construction: SL 0's (the IPoIB broadcast group's) among them, and
/// unicast's own where they kept it.
///
/// Tries, in order, at most `opts.tree_tries` (one where the fabric is
/// too large for the check, `multicast::verified::checkable`):
/// 1. every layer seeded with a candidate tree: where a path closes a
///    cycle with it in every layer, a layer lets the tree go, the highest
///    in use first and layer 0 last; taken when layer 0 kept it. The
///    first candidate, then the others.
/// 2. one layer seeded, layer 1 up (the others place paths as without a
///    tree, so layer 0 fills as in the plain layering and the seeded
///    layer takes the overflow around the tree), for each candidate;
///    taken when that layer kept it, and then swapped with layer 0, so
///    that it goes on SL 0 and VL 0.
///
/// On the Dragonfly a=8, h=4, p=4 at 3 VLs every candidate needs a fourth
/// layer with every layer seeded, but 7 of 9 fit in 3 with layer 1 alone
/// seeded; on the random 100-switch fabric at 4 VLs the eighth candidate
/// fits with every layer seeded.
fn around_the_multicast_tree(
    engine: &str,
    fabric: &Fabric,
    lfts: &[Lft],
    lid_order: &[Lid],
    layer_opts: LayerOptions,
    opts: &LayeringOptions,
) -> Result<placement::Layering, LayeringError> {
    let plain = assign_layers(fabric, lfts, lid_order, &layer_opts)?;
    let vl0_alone = plain.layers_used > 1
        && MulticastVl::decide(opts.multicast_vl, plain.layers_used, layer_opts.max_layers)
            == MulticastVl::Kept;
    if !opts.multicast_tree || vl0_alone || plain.unplaced_paths > 0 {
        return Ok(plain);
    }
    // Beyond the first try only where the routing-time check will run:
    // on fabrics too large for it no tree is checked, whatever layer 0
    // holds.
    let most_tries = match crate::multicast::verified::checkable(fabric) {
        true => opts.tree_tries,
        false => 1,
    };
    // Seeds are whole floods of the fabric: made on the first try that
    // needs them.
    let mut made = crate::multicast::verified::layering_seeds(fabric);
    let mut seeds: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut tries = 0;
    for seed_layer in std::iter::once(None).chain((1..plain.layers_needed).map(Some)) {
        for candidate in 0.. {
            if tries == most_tries {
                break;
            }
            if candidate == seeds.len() {
                match made.next() {
                    Some(seed) => seeds.push(seed),
                    None => break,
                }
            }
            tries += 1;
            let seeded = LayerOptions {
                max_layers: plain.layers_needed,
                seed: seeds[candidate].clone(),
                seed_layer,
                ..layer_opts.clone()
            };
            let kept_by = seed_layer.unwrap_or(0);
            let around = match assign_layers(fabric, lfts, lid_order, &seeded) {
                Ok(a) if a.seeded & (1 << kept_by) != 0 && a.unplaced_paths == 0 => a,
                _ => continue,
            };
            log::info!(
                "{engine}: unicast placed around multicast candidate tree {candidate} in layer {kept_by}{} \
                 (try {tries}){}",
                if seed_layer.is_some() { " alone" } else { "" },
                if kept_by > 0 { ", which goes on SL 0" } else { "" }
            );
            return Ok(with_layer_first(around, kept_by));
        }
    }
    log::info!(
        "{engine}: unicast layer 0 cannot hold a multicast tree as well in {} layer(s)",
        plain.layers_needed
    );
    Ok(plain)
}

/// `layering` with layers `first` and 0 swapped: the layer that kept the
/// tree goes on SL 0 (and VL 0), where the IPoIB broadcast group is.
/// Any numbering of acyclic layers is as deadlock-free.
fn with_layer_first(mut layering: placement::Layering, first: u8) -> placement::Layering {
    if first == 0 {
        return layering;
    }
    layering.sls.map(|l| match l {
        0 => first,
        l if l == first => 0,
        l => l,
    });
    let bit = |m: u16, l: u8| (m >> l) & 1;
    let (a, b) = (bit(layering.seeded, 0), bit(layering.seeded, first));
    layering.seeded &= !(1 | 1 << first);
    layering.seeded |= b | a << first;
    layering
}

/// Whether a layering of two or more layers leaves SL 0 and VL 0 to
/// multicast: SL 0 is OpenSM's default SL and the IPoIB broadcast group's,
/// and hosts take unicast SLs from the SA (`path_sl`). With VL 0 holding
/// only the trees' own turns, one tree has no cycle there and the
/// routing-time check (`multicast::verified`) covers SL-0 groups. A
/// one-layer routing keeps SL 0 and no SL2VL tables (a host that ignores
/// the SA is then still on the deadlock-free VL); the check decides there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MulticastVl {
    /// Unicast layer i on SL/VL i + 1, SL 0 on VL 0.
    Kept,
    /// The layering uses every VL allowed: layer i on SL/VL i, as without.
    NoRoom,
    /// Not asked for.
    Off,
}

impl MulticastVl {
    fn decide(wanted: bool, layers: u8, max_layers: u8) -> Self {
        match wanted {
            false => MulticastVl::Off,
            true if layers < max_layers => MulticastVl::Kept,
            true => MulticastVl::NoRoom,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_what_the_options_say() {
        assert_eq!(
            LayeringOptions::read(&Section::empty("pssp")).unwrap(),
            LayeringOptions::default()
        );
    }
}
