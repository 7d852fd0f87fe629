//! dla's SL-to-VL tables: which VL a packet takes out of each port, from
//! the class of the port it came in on, the class of the port it leaves
//! by, and its SL — all an InfiniBand switch looks at.
//!
//! For a Dragonfly whose groups are complete and all pairwise joined this
//! is the paper's Figure 8: VL 1 exactly on a local hop that follows a
//! global hop, VL 0 elsewhere. Where cables are gone, paths take local
//! detours (a source turn on the way to a global cable, a destination turn
//! on the way to the destination; see `plan`) and, between groups that
//! lost every cable, a second global hop through a middle group whose
//! colour the SL carries. Entries through a neighbouring group (`entry`)
//! take the same shape on SLs of their own: with no local hop in the
//! middle group (base + `ENTRY_OFFSET`, no colour needed: a switch that
//! turns from a global cable to a global cable on that SL is the middle),
//! or with one (base + `ENTRY_OFFSET` + 1 + the middle group's entry
//! colour). VLs:
//!
//! - VL 0: the source group's hops and the first global hop;
//! - VL 1: after one global hop, a destination group's hops (SL = base)
//!   or a middle group's hops and the second global hop (the SL's colour
//!   is the group's own; on the colour-free entry SL, the global-to-global
//!   turn);
//! - VL 2: after two global hops, the destination group's hops (the SL's
//!   colour is not the group's; on the colour-free entry SL, every hop
//!   in from a global cable and every destination turn).
//!
//! Why there is no credit loop. A dependency goes from the channel a packet
//! holds to the next one it asks for. Along every path the VL never goes
//! down, except into a channel to a host, which no packet leaves again and
//! so closes no cycle. So a cycle would lie within one VL. A global
//! channel's next hop is on a higher VL (or to a host), so a cycle would
//! use local channels of one group only, each depending on the next at a
//! switch where the path turns from one local cable to another. On VL 0
//! every such turn is a source turn, on VLs 1 and 2 a destination turn,
//! and `plan` chose each set so that its dependencies close no cycle.
//! Middle groups carry at most one local hop, so they add no turn (an
//! entry without a local hop there puts no local channel on VL 1 at all).
//! This holds for every path only because the tables, which are per
//! destination, send every packet on as its SL's lane expects; `entry`
//! says how its choices keep that so. The
//! credit-loop check (`analysis::report`) confirms this on every test
//! fabric, and finds the loops when the VLs are taken away.
//!
//! Reserve layers (`plan`) hold whole paths, every hop on the layer's own
//! VL: no other path uses that VL, and the paths were placed so that the
//! layer's dependencies close no cycle.

use super::plan::{Plan, Role, COLOURS, ENTRY_OFFSET};
use crate::fabric::{Fabric, Peer, PortNum, SwitchId};
use crate::routing::{Sl2Vl, SlVlTable, ALL_VL0, NUM_SLS};

/// What a switch port is cabled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PortClass {
    Unused,
    /// A host, or the switch itself (port 0).
    Terminal,
    Local(SwitchId),
    Global,
}

fn class(plan: &Plan, s: SwitchId, port: PortNum) -> PortClass {
    if port.is_management() {
        return PortClass::Terminal;
    }
    match plan.graph.peer(s, port) {
        None => PortClass::Unused,
        Some(Peer::Ca(_)) => PortClass::Terminal,
        Some(Peer::Switch { switch, .. }) if switch == s => PortClass::Unused,
        Some(Peer::Switch { switch, .. }) if plan.group_of(switch) == plan.group_of(s) => {
            PortClass::Local(switch)
        }
        Some(Peer::Switch { .. }) => PortClass::Global,
    }
}

/// What a switch learns from a packet's SL, `base + offset`.
#[derive(Clone, Copy)]
enum Seen {
    /// At most one global hop (offset 0).
    Minimal,
    /// Two global hops through a middle group whose colour the SL names
    /// (`1 + c`: a detour, `ENTRY_OFFSET + 1 + k`: an entry with a local
    /// hop in the middle group): whether this switch's group is it.
    TwoGlobal { in_middle: bool },
    /// An entry without a local hop in the middle group.
    Entry,
}

fn seen(plan: &Plan, group: usize, offset: u8) -> Seen {
    match offset {
        0 => Seen::Minimal,
        ENTRY_OFFSET => Seen::Entry,
        o if o <= COLOURS => Seen::TwoGlobal {
            in_middle: o - 1 == plan.colour[group],
        },
        o => Seen::TwoGlobal {
            in_middle: o - ENTRY_OFFSET - 1 == plan.entry_colour[group],
        },
    }
}

/// What a packet does at a switch, as far as its VL goes: the classes of
/// the ports it comes in and leaves by, and for a turn from one local
/// cable to another, which set the turn is in.
#[derive(Clone, Copy)]
enum Move {
    GlobalToGlobal,
    GlobalToLocal,
    LocalToGlobal,
    /// From one local cable to another in a group that lost some: the
    /// set of the turn, if a route takes it.
    Turn(Option<Role>),
    /// From or to a host, or a turn in a complete group (never taken).
    Other,
}

fn move_of(plan: &Plan, s: SwitchId, inp: PortClass, out: PortClass) -> Move {
    match (inp, out) {
        (PortClass::Global, PortClass::Global) => Move::GlobalToGlobal,
        (PortClass::Global, PortClass::Local(_)) => Move::GlobalToLocal,
        (PortClass::Local(_), PortClass::Global) => Move::LocalToGlobal,
        (PortClass::Local(from), PortClass::Local(to)) if !plan.complete(plan.group_of(s)) => {
            Move::Turn(plan.turn(from, s, to))
        }
        _ => Move::Other,
    }
}

/// The VL of a packet with SL `base + offset` that a switch of `group`
/// sends on after `mv`.
fn vl(plan: &Plan, group: usize, mv: Move, offset: u8) -> u8 {
    let (two_global, in_middle) = match seen(plan, group, offset) {
        Seen::Entry => return entry_vl(mv),
        Seen::Minimal => (false, false),
        Seen::TwoGlobal { in_middle } => (true, in_middle),
    };
    // After the last global hop: VL 1, or 2 when a middle group came first.
    let arrived = if !two_global || in_middle { 1 } else { 2 };
    match mv {
        // Only a middle group turns from one global cable to another; with
        // one global hop the turn is never taken (Figure 8 keeps VL 0
        // there).
        Move::GlobalToGlobal => u8::from(two_global),
        Move::GlobalToLocal => arrived,
        Move::LocalToGlobal => u8::from(in_middle),
        Move::Turn(Some(Role::Destination)) => arrived,
        Move::Turn(_) | Move::Other => 0,
    }
}

/// The VL of an entry through a neighbouring group (`entry`): VL 0 in
/// the source group and on its global hop, VL 1 on the second global hop
/// (the only global-to-global turn an entry makes), VL 2 in the
/// destination group, whose local turns are destination turns.
fn entry_vl(mv: Move) -> u8 {
    match mv {
        Move::GlobalToGlobal => 1,
        Move::GlobalToLocal | Move::Turn(Some(Role::Destination)) => 2,
        Move::LocalToGlobal | Move::Turn(_) | Move::Other => 0,
    }
}

/// The tables for the SLs in use: `base`, `base + 1 + c` for every colour
/// `c` of a middle group some detour crosses, `base + ENTRY_OFFSET` when
/// some path takes an entry, and from `first_reserve_sl` one SL per
/// reserve layer, which every switch sends on the layer's own VL, above
/// the scheme's. CA ports send every one of them on VL 0.
pub fn sl2vl_tables(
    fabric: &Fabric,
    plan: &Plan,
    base: u8,
    detour_offsets: &[u8],
    (first_reserve_sl, reserve_layers): (u8, u8),
) -> Sl2Vl {
    // Any SL above the base uses VL 2 (a destination group after two
    // global hops).
    let first_reserve_vl = if detour_offsets.is_empty() { 2 } else { 3 };
    let reserve: Vec<(u8, u8)> = (0..reserve_layers)
        .map(|layer| (first_reserve_sl + layer, first_reserve_vl + layer))
        .collect();
    let mut tables = Sl2Vl::new(fabric, ALL_VL0);
    let offsets: Vec<u8> = std::iter::once(0)
        .chain(detour_offsets.iter().copied())
        .collect();
    for s in plan.graph.ids() {
        let group = plan.group_of(s);
        let ports = plan.graph.port_slots(s);
        let classes: Vec<PortClass> = (0..ports)
            .map(|p| class(plan, s, PortNum::new(p as u8)))
            .collect();
        for (inp, &ic) in classes.iter().enumerate() {
            if ic == PortClass::Unused {
                continue;
            }
            for (outp, &oc) in classes.iter().enumerate() {
                if oc == PortClass::Unused || inp == outp {
                    continue;
                }
                // SLs no path uses map like the base SL: for an intact
                // Dragonfly that is Figure 8, which is the same for every SL.
                let mv = move_of(plan, s, ic, oc);
                let mut table: SlVlTable = [vl(plan, group, mv, 0); NUM_SLS];
                for &offset in &offsets {
                    table[(base + offset) as usize % NUM_SLS] = vl(plan, group, mv, offset);
                }
                for &(sl, vl) in &reserve {
                    table[sl as usize] = vl;
                }
                if table != ALL_VL0 {
                    tables.set_switch(s, PortNum::new(inp as u8), PortNum::new(outp as u8), table);
                }
            }
        }
    }
    for sl in offsets
        .iter()
        .map(|&o| base + o)
        .chain(reserve.iter().map(|&(sl, _)| sl))
    {
        tables.set_ca(sl, 0);
    }
    tables
}
