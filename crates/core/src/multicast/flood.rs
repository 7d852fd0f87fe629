//! What a group's MFTs make the switches do with a packet: the channel
//! dependencies of every flood, and where floods arrive.

use std::collections::VecDeque;

use super::GroupMft;
use crate::analysis::credit::Channel;
use crate::fabric::{Fabric, Peer, PortNum, PortRef, SwitchId};
use crate::routing::{Sl2Vl, ALL_VL0};

/// The VL a packet on `sl` gets from `switch` going `inp` -> `out`.
pub(crate) fn vl(
    sl2vl: Option<&Sl2Vl>,
    switch: SwitchId,
    inp: PortNum,
    out: PortNum,
    sl: u8,
) -> u8 {
    sl2vl.map_or(ALL_VL0[sl as usize & 0xf], |t| t.vl(switch, inp, out, sl))
}

/// Ports a packet of `group` can enter `s` on: member CA ports in its
/// mask (members send) and switch ports whose far end forwards to `s`.
fn in_ports(fabric: &Fabric, group: &GroupMft, s: SwitchId) -> Vec<PortNum> {
    let graph = fabric.graph();
    let mut ports = Vec::new();
    for (p, peer) in graph.peers(s).iter().enumerate().skip(1) {
        let p = PortNum::new(p as u8);
        let enters = match *peer {
            Some(Peer::Ca(_)) => group.mask(s).contains(&p),
            Some(Peer::Switch { switch, port }) => {
                switch != s && group.mask(switch).contains(&port)
            }
            None => false,
        };
        if enters {
            ports.push(p);
        }
    }
    ports
}

/// Calls `dep(a, b)` for every channel dependency a flood of `group` can
/// create: a packet holding `a` (switch `t`'s out-port towards `s`, on the
/// VL `t` gave it) waits for `b` (an out-port of `s` in the mask other
/// than the one it came in on, on the VL `s` gives it). Ports a packet
/// could enter on are taken from the masks, so the set may be larger than
/// what real floods create, never smaller.
pub fn for_each_dependency(
    fabric: &Fabric,
    sl2vl: Option<&Sl2Vl>,
    group: &GroupMft,
    dep: &mut dyn FnMut(Channel, Channel),
) {
    for_each_dependency_from(fabric, sl2vl, group, group.switches(), dep)
}

/// The dependencies of `for_each_dependency` whose held channel leaves
/// one of `from` (a group grown switch by switch: the switches whose
/// masks changed and their neighbours give every dependency the change
/// can add).
pub fn for_each_dependency_from(
    fabric: &Fabric,
    sl2vl: Option<&Sl2Vl>,
    group: &GroupMft,
    from: impl IntoIterator<Item = SwitchId>,
    dep: &mut dyn FnMut(Channel, Channel),
) {
    let graph = fabric.graph();
    let sl = group.sl;
    for t in from {
        for inp in in_ports(fabric, group, t) {
            for &p in group.mask(t).iter().filter(|&&p| p != inp) {
                let Some(Peer::Switch {
                    switch: s,
                    port: far,
                }) = graph.peer(t, p)
                else {
                    continue;
                };
                if s == t {
                    continue;
                }
                let held = Channel {
                    switch: t,
                    port: p,
                    vl: vl(sl2vl, t, inp, p, sl),
                };
                for &o in group.mask(s).iter().filter(|&&o| o != far && o.raw() != 0) {
                    dep(
                        held,
                        Channel {
                            switch: s,
                            port: o,
                            vl: vl(sl2vl, s, far, o, sl),
                        },
                    );
                }
            }
        }
    }
}

/// The members of a group: CA ports its masks forward to.
pub fn members(fabric: &Fabric, group: &GroupMft) -> Vec<(SwitchId, PortNum, PortRef)> {
    let graph = fabric.graph();
    let mut out = Vec::new();
    for s in group.switches() {
        for &p in group.mask(s) {
            if let Some(Peer::Ca(ca)) = graph.peer(s, p) {
                out.push((s, p, ca));
            }
        }
    }
    out
}

/// How floods from the members went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// (sender, member) pairs where the member got no copy.
    pub unreached: u64,
    /// (sender, member) pairs where the member got more than one copy.
    pub duplicated: u64,
    /// A flood still going after every switch port could have carried it
    /// once: the masks close a forwarding loop.
    pub looping: bool,
}

/// Floods a packet from one member on each member switch (members on one
/// switch see the same tree beyond it) and counts copies per member.
pub fn deliveries(fabric: &Fabric, group: &GroupMft) -> Delivery {
    let graph = fabric.graph();
    let members = members(fabric, group);
    let mut out = Delivery::default();
    let budget = graph.channel_count() + 1;
    let mut senders: Vec<(SwitchId, PortNum)> = members.iter().map(|&(s, p, _)| (s, p)).collect();
    senders.dedup_by_key(|(s, _)| *s);
    let mut copies = vec![0u32; members.len()];
    for &(s0, p0) in &senders {
        copies.iter_mut().for_each(|c| *c = 0);
        let mut queue = VecDeque::from([(s0, p0)]);
        let mut steps = 0usize;
        while let Some((s, inp)) = queue.pop_front() {
            steps += 1;
            if steps > budget {
                out.looping = true;
                break;
            }
            for &o in group.mask(s).iter().filter(|&&o| o != inp) {
                match graph.peer(s, o) {
                    Some(Peer::Switch { switch, port }) if switch != s => {
                        queue.push_back((switch, port))
                    }
                    Some(Peer::Ca(_)) => {
                        if let Some(i) = members.iter().position(|&(ms, mp, _)| ms == s && mp == o)
                        {
                            copies[i] += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
        for (i, &(s, p, _)) in members.iter().enumerate() {
            if (s, p) == (s0, p0) {
                continue;
            }
            match copies[i] {
                0 => out.unreached += 1,
                1 => {}
                _ => out.duplicated += 1,
            }
        }
        if out.looping {
            break;
        }
    }
    out
}

/// The tree's root as the switch (of those in the group) whose farthest
/// member switch is nearest along the masks, and that distance (the
/// depth); ties go to the lowest GUID. `None` for a group without members.
pub fn root_and_depth(fabric: &Fabric, group: &GroupMft) -> Option<(SwitchId, u32)> {
    let graph = fabric.graph();
    let member_switches: Vec<SwitchId> = {
        let mut m: Vec<SwitchId> = members(fabric, group).iter().map(|m| m.0).collect();
        m.dedup();
        m
    };
    if member_switches.is_empty() {
        return None;
    }
    let mut dist = vec![u32::MAX; fabric.switch_count()];
    let mut best: Option<(SwitchId, u32)> = None;
    for r in group.switches() {
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        dist[r] = 0;
        let mut queue = VecDeque::from([r]);
        while let Some(s) = queue.pop_front() {
            for &o in group.mask(s) {
                if let Some(Peer::Switch { switch, .. }) = graph.peer(s, o) {
                    if dist[switch] == u32::MAX {
                        dist[switch] = dist[s] + 1;
                        queue.push_back(switch);
                    }
                }
            }
        }
        let ecc = member_switches.iter().map(|&m| dist[m]).max().unwrap_or(0);
        if ecc != u32::MAX && best.is_none_or(|(_, b)| ecc < b) {
            best = Some((r, ecc));
        }
    }
    best
}
