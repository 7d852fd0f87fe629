//! `dla`: deterministic minimal routing for Dragonflies (Kim & Dally),
//! deadlock-free with one SL and two VLs by shifting to VL 1 on the local
//! hop that follows a global hop (DLA paper, Figures 4 and 8) — and, where
//! cables and switches are gone, the shortest detours: through another
//! member of a group that lost a local cable, through a middle group when
//! two groups lost every cable between them, on a third VL and SLs that
//! name the middle group's colour (`plan`, `lanes`), and through a
//! neighbouring group where a cable lands far from its destination or a
//! switch's own cable is shorter (`entry`); what damage leaves beyond that
//! on reserve layers checked free of cycles.
//!
//! A Dragonfly+ (groups that are two-level leaf/spine fat trees, global
//! cables between spines) is recognised first and routed by `plus`:
//! minimal paths on one VL where it is intact, the shortest detours on
//! lanes of up to three VLs where cables and switches are gone.

mod entry;
mod lanes;
mod local;
mod plan;
mod plus;
mod tables;

use crate::config::{ConfigError, OptionSpec, Section};
use crate::deadlock::virtual_layers::placement::{place_paths, LayeringError};
use crate::engines::{EngineInfo, Outcome};
use crate::error::{Decline, Error};
use crate::fabric::{Fabric, SwitchId};
use crate::routing::{PathSl, Routing, NUM_SLS};
use crate::topology::dragonfly::{
    check_shape, discover_groups, find_groups, groups_by_mapping, NotADragonfly,
};
use crate::topology::dragonfly_plus::{self, NotAPlus};

use plan::{Plan, Unroutable, COLOURS, LAST_ENTRY_OFFSET};

pub const NAME: &str = "dla";

const SL: OptionSpec = OptionSpec {
    key: "sl",
    default: "0",
    help: "the SL of every path with at most one global hop; detours between groups that lost their cables \
           use the next three, entries through a neighbouring group the five after those, heavier damage reserve \
           layers above them (path_sl answers them all; CA ports map them to VL 0)",
};
const GROUPS: OptionSpec = OptionSpec {
    key: "groups",
    default: "auto",
    help: "how dla finds groups: auto (the DLA paper's closed neighbourhoods where they are consistent, link \
           equivalence otherwise), neighbourhood or mapping (link equivalence) only",
};

/// dla's options (`dla.*` in osmroute.conf).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DlaOptions {
    /// The SL of every path with at most one global hop (the paper's
    /// single SL); detours use the next three, entries through a
    /// neighbouring group the five after those, reserve layers the ones
    /// above.
    pub sl: u8,
    /// How dla finds the Dragonfly's groups.
    pub groups: GroupDiscovery,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupDiscovery {
    /// Closed neighbourhoods where they give consistent groups of one size
    /// (an intact Dragonfly), link equivalence otherwise.
    Auto,
    /// The DLA paper's stage 1 only: cliques of closed neighbourhoods.
    Neighbourhood,
    /// Link equivalence only (direct-topologies paper §2.2).
    Mapping,
}

impl DlaOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        let discoveries = [
            ("auto", GroupDiscovery::Auto),
            ("neighbourhood", GroupDiscovery::Neighbourhood),
            ("mapping", GroupDiscovery::Mapping),
        ];
        Ok(DlaOptions {
            sl: s.number(&SL, 0, 15)?,
            groups: s.choice(&GROUPS, &discoveries)?,
        })
    }
}

impl Default for DlaOptions {
    fn default() -> Self {
        DlaOptions {
            sl: 0,
            groups: GroupDiscovery::Auto,
        }
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "Kim & Dally minimal routing for Dragonflies, intact (1 SL, 2 VLs) or with cables and switches \
              missing (shortest detours and entries through neighbouring groups, up to 9 SLs and 3 VLs); \
              Dragonfly+ (leaf/spine groups) with minimal host paths on 1 VL and detours on up to 3",
    needs_qos: true,
    options: &[&[SL, GROUPS]],
    build: |s| {
        let options = DlaOptions::read(s)?;
        Ok(Box::new(super::Configured { options, route: |f, o| route(f, o).map(Outcome::from) }))
    },
};

pub fn route(fabric: &Fabric, options: &DlaOptions) -> Result<Routing, Error> {
    let graph = fabric.graph();
    let decline = |code: Decline, why: String| Error::declined(NAME, code, why);
    let name = |s: SwitchId| fabric.describe_switch(s);
    if graph.switch_count() == 0 {
        return Err(decline(
            Decline::NoSwitches,
            "the fabric has no switches".to_string(),
        ));
    }
    if let Some(far) = graph.unreached_from(SwitchId::new(0)) {
        return Err(decline(
            Decline::Disconnected,
            format!(
                "the fabric is in pieces: {} and {} are not connected; cable it back together",
                name(SwitchId::new(0)),
                name(far)
            ),
        ));
    }
    // A Dragonfly+ first: its cabling (leaves only to spines) is never a
    // Dragonfly's (cliques), so at most one of the two recognisers accepts.
    let not_plus = match dragonfly_plus::recognise(graph) {
        Ok(plus) => return plus::route(fabric, &plus, options.sl),
        Err(e) => explain_plus(fabric, &e),
    };
    let not_a_dragonfly = |why: String| {
        Error::declined(
            NAME,
            Decline::NotItsTopology,
            format!("{why}; not a Dragonfly+ either: {not_plus}"),
        )
    };
    let started = std::time::Instant::now();
    let groups = match options.groups {
        GroupDiscovery::Auto => find_groups(graph),
        GroupDiscovery::Neighbourhood => discover_groups(graph),
        GroupDiscovery::Mapping => Ok(groups_by_mapping(graph)),
    }
    .and_then(|groups| check_shape(graph, &groups).map(|()| groups))
    .map_err(|e| not_a_dragonfly(explain_groups(fabric, &e)))?;
    let t1 = started.elapsed();
    let plan = Plan::new(graph, groups).map_err(|e| match e {
        // A Dragonfly, but one whose group lost too many local cables.
        Unroutable::LocalPair { .. } => decline(Decline::TooDamaged, explain_plan(fabric, &e)),
        _ => not_a_dragonfly(explain_plan(fabric, &e)),
    })?;
    let t2 = started.elapsed();
    let destinations = tables::destinations(fabric, &plan);
    let detours = tables::DetourRoutes::new(&plan, &destinations);
    let t_detours = started.elapsed();
    let entries = detours.has_entries();
    let mut offsets: Vec<u8> = if plan.has_detours {
        (1..=COLOURS).collect()
    } else {
        Vec::new()
    };
    offsets.extend(&detours.entry_offsets);
    // Reserve layers start above the last SL the scheme uses.
    let first_reserve_sl =
        options.sl as usize + 1 + if entries { LAST_ENTRY_OFFSET } else { COLOURS } as usize;
    let top_sl = if plan.per_path_sls() || entries {
        first_reserve_sl
    } else {
        options.sl as usize
    };
    if top_sl >= NUM_SLS {
        let used = first_reserve_sl - options.sl as usize - 1;
        return Err(decline(
            Decline::OutOfSls,
            format!(
            "detours between groups that lost their cables (and entries through a neighbouring group) use SLs \
             dla.sl + 1 to + {used}, reserve layers the ones above, and dla.sl is {}; set dla.sl to {} or less",
            options.sl,
            NUM_SLS - 2 - used
        ),
        ));
    }
    let mut filled = tables::forwarding_tables(fabric, &plan, &destinations, &detours, options.sl);
    let t3 = started.elapsed();
    let layers = place_reserve(fabric, &mut filled, first_reserve_sl as u8)
        .map_err(|why| decline(Decline::OutOfSls, why))?;
    let path_sl = filled
        .sls
        .map_or(PathSl::Uniform(options.sl), PathSl::PerSourceSwitch);
    let lfts = filled.lfts;
    let sl2vl = lanes::sl2vl_tables(
        fabric,
        &plan,
        options.sl,
        &offsets,
        (first_reserve_sl as u8, layers),
    );
    log::debug!(
        "dla: groups found in {} ms, planned in {} ms, detours and entries in {} ms, tables filled in {} ms, reserve \
         layers and SL2VL in {} ms",
        t1.as_millis(),
        (t2 - t1).as_millis(),
        (t_detours - t2).as_millis(),
        (t3 - t_detours).as_millis(),
        (started.elapsed() - t3).as_millis()
    );
    log_shape(fabric, &plan);
    Ok(Routing {
        engine: NAME.to_string(),
        lfts,
        sl2vl: Some(sl2vl),
        path_sl,
    })
}

/// Gives every path the plan sent to the reserve layers an SL from
/// `first_sl` on, one per layer, such that no layer's dependencies close a
/// cycle; the number of layers used.
fn place_reserve(fabric: &Fabric, filled: &mut tables::Tables, first_sl: u8) -> Result<u8, String> {
    if filled.reserve.is_empty() {
        return Ok(0);
    }
    let budget = NUM_SLS as u8 - first_sl;
    let layers = place_paths(fabric, &filled.lfts, &filled.reserve, budget).map_err(|e| match e {
        LayeringError::OutOfLayers { .. } => format!(
            "{} paths have no route through a middle group, and the {budget} SLs left above dla.sl's detour SLs \
             are not enough layers to keep them free of credit loops ({e}); the fabric is too damaged for dla",
            filled.reserve.len()
        ),
        LayeringError::Undeliverable { .. } => format!("internal error: {e}"),
    })?;
    let sls = filled
        .sls
        .as_mut()
        .expect("reserve paths come with per-path SLs");
    for (&(s, lid), &layer) in filled.reserve.iter().zip(&layers) {
        sls.set(s, lid, first_sl + layer);
    }
    let used = layers.iter().max().map_or(0, |&l| l + 1);
    log::info!(
        "dla: {} paths have no route through a middle group and take {used} reserve layer(s)",
        layers.len()
    );
    Ok(used)
}

/// One line on what was found: groups, and what is missing.
fn log_shape(fabric: &Fabric, plan: &Plan) {
    let sizes = plan.groups.members.iter().map(Vec::len);
    let (smallest, largest) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
    let size = if smallest == largest {
        smallest.to_string()
    } else {
        format!("{smallest} to {largest}")
    };
    let g = plan.groups.members.len();
    let damaged = (0..g).filter(|&gi| !plan.complete(gi)).count();
    let unjoined = (0..g)
        .flat_map(|a| (a + 1..g).map(move |b| (a, b)))
        .filter(|&(a, b)| plan.links(a, b).is_empty())
        .count();
    let damage = if damaged == 0 && unjoined == 0 {
        String::new()
    } else {
        format!("; {damaged} group(s) missing local cables, {unjoined} pair(s) of groups without a global cable")
    };
    log::info!(
        "dla: {g} groups of {size} switches, {} LIDs routed{damage}",
        fabric.lids().count()
    );
}

fn explain_groups(fabric: &Fabric, e: &NotADragonfly) -> String {
    let name = |s: SwitchId| fabric.describe_switch(s);
    let names = |set: &[SwitchId]| set.iter().map(|&s| name(s)).collect::<Vec<_>>().join(", ");
    match e {
        NotADragonfly::Empty => "the fabric has no switches".to_string(),
        NotADragonfly::Inconsistent { switch, its_group, member, member_group } => format!(
            "closed neighbourhoods give no consistent groups: {} sees group [{}] but {} sees [{}]; \
             `dla.groups auto` (the default) finds the groups of a damaged Dragonfly by link equivalence",
            name(*switch),
            names(its_group),
            name(*member),
            names(member_group)
        ),
        NotADragonfly::TooSmall { switch, size, groups } => format!(
            "not a Dragonfly: its cliques of local cables (groups) are {groups} of mostly {size} switches (e.g. the \
             group of {}), where a Dragonfly has at least two groups of at least 3; use an engine for any topology \
             (`routing_engine dla,pssp`)",
            name(*switch)
        ),
        NotADragonfly::SparseGroups { sparsest, share } => format!(
            "not a Dragonfly: its switches fall into groups, but these hold only {:.0} % of the local cables \
             cliques of their sizes would have (the group of {} lacks the most), where a Dragonfly dla routes \
             keeps at least {:.0} %; use an engine for any topology (`routing_engine dla,pssp`)",
            share * 100.0,
            name(*sparsest),
            crate::topology::dragonfly::MIN_LOCAL_SHARE * 100.0
        ),
        NotADragonfly::GroupSize { switch, size, expected } => format!(
            "closed neighbourhoods give groups of different sizes: the group of {} has {size} switches, expected \
             {expected}; `dla.groups auto` (the default) finds the groups of a damaged Dragonfly by link equivalence",
            name(*switch)
        ),
    }
}

fn explain_plus(fabric: &Fabric, e: &NotAPlus) -> String {
    let name = |s: SwitchId| fabric.describe_switch(s);
    match e {
        NotAPlus::NoLeaves => "no switch carries hosts apart from at most one CA (an Aggregation Node)".to_string(),
        NotAPlus::LeafToLeaf { a, b } => format!(
            "{} and {} both carry hosts and are cabled to each other, where a Dragonfly+ cables leaves only to spines",
            name(*a),
            name(*b)
        ),
        NotAPlus::Unclassified { switch, neighbour } => format!(
            "{} carries no hosts and is not cabled to a leaf, but its neighbour {} is no spine",
            name(*switch),
            name(*neighbour)
        ),
        NotAPlus::ThirdTier { hostless, leaves, example } => format!(
            "{hostless} switches without hosts (e.g. {}) are cabled only to spines, too many beside {leaves} leaves \
             with hosts: a third tier, as in a fat tree",
            name(*example)
        ),
        NotAPlus::SpineToSpineInGroup { a, b } => format!(
            "spines {} and {} of one group are cabled to each other",
            name(*a),
            name(*b)
        ),
        NotAPlus::SpineWithoutLeaves { spine } => format!(
            "spine {} has no leaf cable left, so it belongs to no group; re-cable it",
            name(*spine)
        ),
        NotAPlus::OneGroup { switches } => format!(
            "its {switches} switches form a single group of leaves and spines: a two-level fat tree, not a Dragonfly+"
        ),
        NotAPlus::SparseGroup { leaf, cables, full } => format!(
            "the group of {} has {cables} of a full group's {full} leaf-spine cables, not more than half",
            name(*leaf)
        ),
    }
}

fn explain_plan(fabric: &Fabric, e: &Unroutable) -> String {
    let name = |s: SwitchId| fabric.describe_switch(s);
    let other = "use an engine for any topology (`routing_engine dla,pssp`)";
    match e {
        Unroutable::NoGroups { ungrouped, switches, example } => format!(
            "not a Dragonfly: {ungrouped} of {switches} switches (e.g. {}) belong to no group, i.e. close no \
             triangle of cables with their neighbours, where a Dragonfly's groups are cliques; {other}",
            name(*example)
        ),
        Unroutable::SparseGroup { switch, cables, members } => format!(
            "not a Dragonfly: the {members} switches grouped with {} have only {cables} cables among them, not \
             more than half of a clique's {}, where a Dragonfly's groups are cliques of local cables; {other}",
            name(*switch),
            members * (members - 1) / 2
        ),
        Unroutable::LocalPair { a, b } => format!(
            "{} and {} are in one group but have no route through it that keeps the group's local detours \
             deadlock-free (or none at all); the group has lost too many local cables: repair them, or {other}",
            name(*a),
            name(*b)
        ),
    }
}

#[cfg(test)]
mod tests;
