//! How the members of one group reach each other when some of their local
//! cables are gone: shortest paths through the group, chosen so that the
//! *turns* they make (a packet arriving on one local cable and leaving on
//! another) stay deadlock-free on their VLs.
//!
//! There are two sets of routes and turns. Destination routes lead to a
//! destination switch (after a global hop, or inside the group); their
//! turns travel on VL 1 or 2. Source routes lead to the owner of a global
//! cable; their turns travel on VL 0. Within each set, every turn makes
//! the cable into it depend on the cable out of it; each set is grown so
//! that these dependencies close no cycle (an incremental cycle check on
//! the group's few channels), and no turn is in both sets, so a switch
//! knows a turn's VL from its two ports alone. Every pair gets destination
//! routes (else the group is too damaged to route); source routes exist
//! where they fit, and `plan` finds another way where they do not.

use std::collections::{HashSet, VecDeque};

use super::plan::Role;
use crate::deadlock::dynamic_dag::DynamicDag;
use crate::fabric::{SwitchGraph, SwitchId};

/// At most this many next hops per (member, target) pair. Destination
/// routes, which every pair needs, take one each so that they leave turns
/// to the source routes; those spread over two where they can.
fn spread(role: Role) -> usize {
    match role {
        Role::Destination => 1,
        Role::Source => 2,
    }
}

pub struct GroupLocal {
    members: Vec<SwitchId>,
    /// Next hops (positions) from member i towards member j, per role
    /// (`role_index`), at `i * n + j`; empty where the role has no route.
    next: [Vec<Vec<u32>>; 2],
    /// Turns (from, via, to), by position, per role.
    turns: [HashSet<(u32, u32, u32)>; 2],
    /// (via, to) by position, per role: some member's route to `to` passes
    /// `via`.
    passed: [HashSet<(u32, u32)>; 2],
    /// Whether every pair of members is cabled (no turn is ever taken).
    pub complete: bool,
}

fn role_index(role: Role) -> usize {
    match role {
        Role::Source => 0,
        Role::Destination => 1,
    }
}

impl GroupLocal {
    /// Routes within a group (`members` ascending), or a pair of members
    /// that has no destination route.
    pub fn new(graph: &SwitchGraph, members: &[SwitchId]) -> Result<Self, (SwitchId, SwitchId)> {
        let n = members.len();
        let adjacent = |i: usize, j: usize| graph.slot(members[i], members[j]).is_some();
        let mut local = GroupLocal {
            members: members.to_vec(),
            next: [vec![Vec::new(); n * n], vec![Vec::new(); n * n]],
            turns: [HashSet::new(), HashSet::new()],
            passed: [HashSet::new(), HashSet::new()],
            complete: (0..n).all(|i| (0..n).all(|j| i == j || adjacent(i, j))),
        };
        if local.complete {
            for i in 0..n {
                for j in (0..n).filter(|&j| j != i) {
                    local.next[0][i * n + j] = vec![j as u32];
                    local.next[1][i * n + j] = vec![j as u32];
                }
            }
            return Ok(local);
        }
        let neighbours: Vec<Vec<usize>> = (0..n)
            .map(|i| (0..n).filter(|&j| j != i && adjacent(i, j)).collect())
            .collect();
        // Well-connected members first: they take turns most easily.
        let mut by_connection: Vec<usize> = (0..n).collect();
        by_connection.sort_by_key(|&i| (std::cmp::Reverse(neighbours[i].len()), i));
        for role in [Role::Destination, Role::Source] {
            let r = role_index(role);
            let mut deps = DynamicDag::new(n * n);
            for t in 0..n {
                let dist = distances(&neighbours, t);
                let mut order: Vec<usize> = (0..n).filter(|&x| x != t).collect();
                order.sort_by_key(|&x| dist[x]);
                for x in order {
                    if dist[x] == usize::MAX {
                        if role == Role::Destination {
                            return Err((members[x], members[t]));
                        }
                        continue;
                    }
                    if dist[x] == 1 {
                        local.next[r][x * n + t] = vec![t as u32];
                        continue;
                    }
                    let mut chosen = Vec::new();
                    for &y in by_connection
                        .iter()
                        .filter(|&&y| dist[y] + 1 == dist[x] && adjacent(x, y))
                    {
                        if local.take_turns(role, &mut deps, x, y, t) {
                            chosen.push(y as u32);
                            if chosen.len() == spread(role) {
                                break;
                            }
                        }
                    }
                    local.next[r][x * n + t] = chosen;
                }
                // Members left without a shortest route take a longer one:
                // through any neighbour with a route that does not come
                // back through them, as long as the turn fits.
                let mut progress = true;
                while progress {
                    progress = false;
                    let waiting: Vec<usize> = (0..n)
                        .filter(|&x| {
                            x != t && dist[x] != usize::MAX && local.next[r][x * n + t].is_empty()
                        })
                        .collect();
                    for x in waiting {
                        let found = by_connection.iter().copied().find(|&y| {
                            adjacent(x, y)
                                && (y == t || !local.next[r][y * n + t].is_empty())
                                && !local.route_passes(r, y, t, x)
                                && (y == t || local.take_turns(role, &mut deps, x, y, t))
                        });
                        if let Some(y) = found {
                            local.next[r][x * n + t] = vec![y as u32];
                            progress = true;
                        }
                    }
                }
                if role == Role::Destination {
                    if let Some(x) = (0..n).find(|&x| x != t && local.next[r][x * n + t].is_empty())
                    {
                        return Err((members[x], members[t]));
                    }
                }
            }
        }
        Ok(local)
    }

    /// Whether `role`'s routes from `from` towards `t` pass `x`.
    fn route_passes(&self, r: usize, from: usize, t: usize, x: usize) -> bool {
        let n = self.members.len();
        let mut seen = vec![false; n];
        let mut stack = vec![from];
        while let Some(y) = stack.pop() {
            if y == x {
                return true;
            }
            if y == t || std::mem::replace(&mut seen[y], true) {
                continue;
            }
            stack.extend(self.next[r][y * n + t].iter().map(|&z| z as usize));
        }
        false
    }

    /// Adds the turns of going from `x` through `y` towards `t` (one per
    /// next hop of `y`) to `role`'s set if none is the other set's and
    /// their dependencies close no cycle; whether it did.
    fn take_turns(
        &mut self,
        role: Role,
        deps: &mut DynamicDag,
        x: usize,
        y: usize,
        t: usize,
    ) -> bool {
        let n = self.members.len();
        let r = role_index(role);
        let onward = self.next[r][y * n + t].clone();
        if onward.is_empty() {
            return false;
        }
        let turns: Vec<(u32, u32, u32)> = onward.iter().map(|&z| (x as u32, y as u32, z)).collect();
        if turns.iter().any(|turn| self.turns[1 - r].contains(turn)) {
            return false;
        }
        let channel = |a: u32, b: u32| a * n as u32 + b;
        let mut added = Vec::new();
        for &(a, b, c) in &turns {
            match deps.insert(channel(a, b), channel(b, c)) {
                Ok(true) => added.push((channel(a, b), channel(b, c))),
                Ok(false) => {}
                Err(_) => {
                    for &(p, q) in &added {
                        deps.remove(p, q);
                    }
                    return false;
                }
            }
        }
        self.turns[r].extend(turns);
        self.passed[r].insert((y as u32, t as u32));
        true
    }

    fn position(&self, s: SwitchId) -> Option<u32> {
        self.members.binary_search(&s).ok().map(|p| p as u32)
    }

    /// Next hops from `u` towards `t` (both members) in `role`'s routes;
    /// empty where the role has none.
    pub fn next_hops(&self, u: SwitchId, t: SwitchId, role: Role) -> NextHops<'_> {
        let n = self.members.len();
        let positions = match (self.position(u), self.position(t)) {
            (Some(i), Some(j)) => &self.next[role_index(role)][i as usize * n + j as usize][..],
            _ => &[],
        };
        NextHops {
            positions,
            members: &self.members,
        }
    }

    /// Whether some member's route of `role` to `t` passes `via`.
    pub fn passes(&self, via: SwitchId, t: SwitchId, role: Role) -> bool {
        match (self.position(via), self.position(t)) {
            (Some(v), Some(t)) => self.passed[role_index(role)].contains(&(v, t)),
            _ => false,
        }
    }

    /// Whether `role` has a route from `u` to `t`.
    pub fn reaches(&self, u: SwitchId, t: SwitchId, role: Role) -> bool {
        u == t || !self.next_hops(u, t, role).is_empty()
    }

    /// The set of the turn `from` -> `via` -> `to`, if a route takes it.
    pub fn turn(&self, from: SwitchId, via: SwitchId, to: SwitchId) -> Option<Role> {
        let key = (
            self.position(from)?,
            self.position(via)?,
            self.position(to)?,
        );
        [Role::Source, Role::Destination]
            .into_iter()
            .find(|&role| self.turns[role_index(role)].contains(&key))
    }
}

/// A member's next hops towards another (`GroupLocal::next_hops`),
/// without copying them out of the routes.
#[derive(Clone, Copy)]
pub struct NextHops<'a> {
    positions: &'a [u32],
    members: &'a [SwitchId],
}

impl<'a> NextHops<'a> {
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<SwitchId> {
        self.positions.get(i).map(|&k| self.members[k as usize])
    }

    pub fn iter(&self) -> impl Iterator<Item = SwitchId> + 'a {
        let members = self.members;
        self.positions.iter().map(move |&k| members[k as usize])
    }
}

/// Hops from every member to member `t` over the group's cables
/// (`usize::MAX`: not reachable inside the group).
fn distances(neighbours: &[Vec<usize>], t: usize) -> Vec<usize> {
    let mut dist = vec![usize::MAX; neighbours.len()];
    dist[t] = 0;
    let mut queue = VecDeque::from([t]);
    while let Some(x) = queue.pop_front() {
        for &y in &neighbours[x] {
            if dist[y] == usize::MAX {
                dist[y] = dist[x] + 1;
                queue.push_back(y);
            }
        }
    }
    dist
}
