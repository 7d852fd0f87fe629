//! `hxdor`: dimension-order routing for FlatFly/HyperX fabrics, hypercubes
//! and tori (Prisacari et al.'s direct-topologies paper, §3.2–3.4), with
//! the dimensions and coordinates recovered from the bare graph by link
//! equivalence (`topology::grid`). Named so as not to clash with OpenSM's
//! own `dor`, which needs its port numbering to follow the dimensions.
//!
//! A packet corrects one coordinate per hop, in a fixed order of the
//! dimensions; parallel cables of a dimension are spread over destination
//! LIDs. DOR on a FlatFly takes at most one hop per dimension, so one order
//! on one VL has no credit loop. Mixed DOR uses several orders, each on its
//! own SL and VL, chosen by the destination: order d mod O for the d-th host
//! of the destination switch. The paper's four orders for 4-D form a Latin
//! square (each dimension first in one order); for N dimensions we take
//! the N cyclic rotations of (1, …, N), also a Latin square, as many as
//! there are VLs (`hxdor.orders`). Packets never change order, and each
//! order has VLs of its own, so no dependency leaves an order's VLs.
//!
//! Rings (torus dimensions of 5 or more switches) are travelled the short
//! way round (ties split by destination LID) and need a dateline (§3.2):
//! the cable from the last position back to 0. Whether a path crosses it
//! in ring j is known at the source, so it is bit j of the path's SL, and
//! every switch sends a packet out on a ring-j cable on the order's second
//! VL if that bit is set, on its first otherwise. Within one direction of
//! a ring, paths that do not cross never use the dateline cable, and paths
//! that cross cover at most half the ring around it, so neither VL's
//! channels close a cycle; dimensions are still taken in order. With four
//! SL bits that allows four rings, as the paper says, and 16 / 2^rings
//! orders.
//!
//! Damaged grids (cables or switches missing; the mapping tolerates the
//! paper's 20 % switches and 15 % cables on a FlatFly) are routed too:
//!
//! - A broken ring (`lines`) is travelled the way round that is left,
//!   by up*/down* over the line; intact rings keep the short way and their
//!   datelines. Within a line no dependency turns from down to up, so with
//!   dimensions still taken in order these hops need no VL of their own.
//! - Where the line of the next dimension has no cable to the
//!   destination's coordinate (a cable or the switch there is gone; in a
//!   hypercube, its one cable), the switch detours through other
//!   dimensions: up*/down* over the whole graph (one ranking for every
//!   destination) to the switch whose own dimension-order path is whole
//!   and makes the whole path shortest, and on from there in dimension
//!   order. Where that detour VL does not fit, a clique line missing a
//!   cable detours inside the dimension instead, through a third position
//!   (up*/down* over the line, on the order's VL as above), which is one
//!   hop longer than a detour through another dimension needs to be. The detour hops travel on a VL of
//!   their own: up*/down* keeps that VL acyclic, and it only ever leads
//!   into the orders' VLs, never back (a whole dimension-order path never
//!   passes a switch that needs a detour). Detoured paths get spare SLs
//!   under which every switch maps their hops to those VLs
//!   (`deadlock::hop_vls`); the detour VL takes the place of one order
//!   where there are several, so a damaged grid needs no more VLs than the
//!   complete one (one more where it had a single order).

mod grid;
mod lines;
pub mod recognise;
mod updown;

use crate::deadlock::hop_vls::HopVlPlan;
use crate::deadlock::virtual_layers::{vls_allowed, why_too_few_vls};
use crate::error::{Decline, Error};
use crate::fabric::{Fabric, Peer, PortNum, SwitchId};
use crate::routing::{PathSl, Routing, Sl2Vl, SlVlTable, NUM_SLS};
use crate::topology::grid::{map_grid, GridMap};
use grid::{Grid, Routed, Shape};
use lines::Lines;

use crate::config::{ConfigError, OptionSpec, Section};
use crate::engines::{EngineInfo, Outcome};

pub const NAME: &str = "hxdor";

const ORDERS: OptionSpec = OptionSpec {
    key: "orders",
    default: "0",
    help: "dimension orders (Mixed DOR), one VL each (two on tori); 0: one per dimension, bounded by the VLs \
           and, on tori, by 16 / 2^rings SLs; 1: plain DOR on VL 0 (VLs 0 and 1 on tori); a damaged grid that needs \
           detours through other dimensions uses one order fewer",
};

/// hxdor's options (`hxdor.*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HxdorOptions {
    /// Dimension orders (Mixed DOR), one VL each; 0: as many as there are
    /// dimensions, or VLs if fewer. 1 is plain DOR on one VL.
    pub orders: u8,
}

impl HxdorOptions {
    pub fn read(s: &Section) -> Result<Self, ConfigError> {
        s.check_known(INFO.options)?;
        Ok(HxdorOptions {
            orders: s.number(&ORDERS, 0, 15)?,
        })
    }
}

pub const INFO: EngineInfo = EngineInfo {
    name: NAME,
    summary: "(Mixed) dimension-order routing for FlatFly/HyperX, hypercubes and tori (datelines in the SL), \
              mapped from the bare graph",
    needs_qos: true,
    options: &[&[ORDERS]],
    build: |s| {
        let options = HxdorOptions::read(s)?;
        Ok(Box::new(super::Configured { options, route: |f, o| route(f, o).map(Outcome::from) }))
    },
};

/// The dimension orders used: rotations of 0..dims, `count` of them.
fn orders(dims: usize, count: usize) -> Vec<Vec<usize>> {
    (0..count)
        .map(|r| (0..dims).map(|i| (r + i) % dims).collect())
        .collect()
}

pub fn route(fabric: &Fabric, options: &HxdorOptions) -> Result<Routing, Error> {
    let graph = fabric.graph();
    let mapped = recognised_grid(fabric)?;
    let dims = mapped.extent.len();
    let lines = Lines::new(graph, &mapped);
    let rings: Vec<usize> = (0..dims).filter(|&i| mapped.ring[i]).collect();
    let shape = shape_of(fabric, &rings)?;
    let vls = vls_allowed(NAME, fabric, 0) as usize;
    let count = order_count(options, dims, vls, shape);
    let (routed, count) =
        route_with_fewest_orders(fabric, &mapped, &rings, &lines, count, vls, shape)?;
    let detour_vl = (count * shape.vls_per_order) as u8;
    if routed.detours > 0 && detour_vl as usize >= vls {
        return Err(Error::declined(
            NAME,
            Decline::TooFewVls,
            format!(
                "detours around missing cables or switches need VL {detour_vl} beside dimension order's; {}",
                why_too_few_vls(NAME, fabric, 0)
            ),
        ));
    }
    let vls_used = count * shape.vls_per_order + usize::from(routed.detours > 0);
    log::info!(
        "{NAME}: {dims}-D grid {:?} with {} ring(s), {count} dimension order(s) on {vls_used} VL(s); {} line(s) \
         miss a cable or switch, {} (source switch, LID) path(s) detour through other dimensions on VL {detour_vl} \
         ({} spare SL(s))",
        mapped.extent,
        rings.len(),
        lines.damaged(),
        routed.detours,
        routed.plan.sls_used(),
    );
    let Routed {
        lfts,
        sls,
        plan,
        detours,
    } = routed;
    if count == 1 && rings.is_empty() && detours == 0 {
        return Ok(Routing {
            engine: NAME.to_string(),
            lfts,
            sl2vl: None,
            path_sl: PathSl::Uniform(0),
        });
    }
    Ok(Routing {
        engine: NAME.to_string(),
        lfts,
        sl2vl: Some(sl2vl_tables(
            fabric,
            &mapped.coords,
            &rings,
            count,
            shape,
            &plan,
        )),
        path_sl: PathSl::PerSourceSwitch(sls),
    })
}

/// The fabric mapped as a grid (dimensions and coordinates by link
/// equivalence), or why hxdor declines it.
fn recognised_grid(fabric: &Fabric) -> Result<GridMap, Error> {
    let graph = fabric.graph();
    if graph.switch_count() == 0 {
        return Err(Error::declined(
            NAME,
            Decline::NoSwitches,
            "the fabric has no switches; nothing to route",
        ));
    }
    if let Some(lost) = graph.unreached_from(SwitchId::new(0)) {
        return Err(Error::declined(
            NAME,
            Decline::Disconnected,
            format!(
                "{} cannot be reached from {}: the fabric is in pieces",
                fabric.describe_switch(lost),
                fabric.describe_switch(SwitchId::new(0))
            ),
        ));
    }
    // Mapped on switch ids (GUID order), so that dimensions and coordinates
    // are numbered alike whatever order the SM or a net file lists nodes in.
    let mapped = map_grid(graph).map_err(|e| {
        Error::declined(
            NAME,
            Decline::NotItsTopology,
            format!("not a FlatFly, hypercube or torus: {e}"),
        )
    })?;
    recognise::recognise(graph, &mapped)
        .map_err(|why| Error::declined(NAME, Decline::NotItsTopology, why))?;
    Ok(mapped)
}

/// SLs and VLs per dimension order: a dateline bit per ring in the SL, a
/// second VL per order where there are rings.
fn shape_of(fabric: &Fabric, rings: &[usize]) -> Result<Shape, Error> {
    if rings.len() > 4 {
        return Err(Error::declined(
            NAME,
            Decline::OutOfSls,
            format!(
                "a {}-ring torus needs a dateline bit per ring in the path SL, which has 4; use pssp or layered",
                rings.len()
            ),
        ));
    }
    let shape = Shape {
        sls_per_order: 1usize << rings.len(),
        vls_per_order: if rings.is_empty() { 1 } else { 2 },
    };
    if (vls_allowed(NAME, fabric, 0) as usize) < shape.vls_per_order {
        return Err(Error::declined(
            NAME,
            Decline::TooFewVls,
            format!(
                "rings need 2 VLs for their datelines; {}",
                why_too_few_vls(NAME, fabric, 0)
            ),
        ));
    }
    Ok(shape)
}

/// How many dimension orders (Mixed DOR) the option asks for, as far as
/// the VLs and SLs allow.
fn order_count(options: &HxdorOptions, dims: usize, vls: usize, shape: Shape) -> usize {
    let wanted = if options.orders == 0 {
        dims
    } else {
        options.orders as usize
    };
    let count = wanted
        .min(dims)
        .min(vls / shape.vls_per_order)
        .min(NUM_SLS / shape.sls_per_order)
        .max(1);
    if count < wanted.min(dims) {
        log::warn!(
            "{NAME}: {count} dimension orders, not {}: only {vls} VLs are usable and each order takes {}",
            wanted.min(dims),
            shape.vls_per_order
        );
    }
    count
}

/// Routes the grid with `count` orders, or fewer where the detours do not
/// fit: the routing and the number of orders it has.
fn route_with_fewest_orders(
    fabric: &Fabric,
    mapped: &GridMap,
    rings: &[usize],
    lines: &Lines,
    mut count: usize,
    vls: usize,
    shape: Shape,
) -> Result<(Routed, usize), Error> {
    let dims = mapped.extent.len();
    let complete_count = count;
    // A missing cable of a clique is best detoured through other
    // dimensions (the path stays minimal); only where the detour VL does
    // not fit is it detoured inside the dimension, through a third position.
    let mut in_line_detours = false;
    loop {
        let grid = Grid {
            fabric,
            coords: &mapped.coords,
            extent: &mapped.extent,
            rings,
            lines,
            in_line_detours,
        };
        match grid.route(&orders(dims, count), shape) {
            // The detour VL takes an order's place where there are several,
            // so a damaged grid needs no more VLs than the complete one.
            Ok(r) if r.detours > 0 && count == complete_count && count > 1 => {}
            Ok(r) if r.detours > 0 && count * shape.vls_per_order >= vls && !in_line_detours => {
                in_line_detours = true;
                continue;
            }
            Ok(r) => return Ok((r, count)),
            Err((code, why)) if count == 1 => return Err(Error::declined(NAME, code, why)),
            Err((_, why)) => {
                log::info!("{NAME}: with {count} dimension orders: {why}; trying one fewer")
            }
        }
        count -= 1;
    }
}

/// SL = order · 2^rings + dateline bits; an order's first VL is order ·
/// vls_per_order, its second on a ring's cable when the SL has that ring's
/// dateline bit. Spare SLs get what the detours' plan says.
fn sl2vl_tables(
    fabric: &Fabric,
    coords: &[Vec<usize>],
    rings: &[usize],
    count: usize,
    shape: Shape,
    plan: &HopVlPlan,
) -> Sl2Vl {
    let graph = fabric.graph();
    let first_vl: SlVlTable = std::array::from_fn(|sl| match sl / shape.sls_per_order {
        o if o < count => (o * shape.vls_per_order) as u8,
        _ => 0,
    });
    let mut sl2vl = Sl2Vl::new(fabric, first_vl);
    for s in graph.ids() {
        let ports = graph.peers(s);
        for (out, peer) in ports.iter().enumerate() {
            let Some(Peer::Switch { switch: t, .. }) = *peer else {
                continue;
            };
            let Some(j) = rings.iter().position(|&i| coords[s][i] != coords[t][i]) else {
                continue;
            };
            let table: SlVlTable =
                std::array::from_fn(|sl| match sl / shape.sls_per_order < count {
                    true => first_vl[sl] + u8::from(sl & 1 << j != 0),
                    false => first_vl[sl],
                });
            for inp in 0..ports.len() {
                sl2vl.set_switch(s, PortNum::new(inp as u8), PortNum::new(out as u8), table);
            }
        }
    }
    plan.write(fabric, &mut sl2vl);
    for sl in 0..NUM_SLS as u8 {
        sl2vl.set_ca(sl, first_vl[sl as usize]);
    }
    sl2vl
}

#[cfg(test)]
mod tests;
