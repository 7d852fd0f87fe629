//! Which VL every hop of a Dragonfly+ path takes, and the SLs that tell
//! the switches.
//!
//! **The rule.** A path starts on VL 0 and moves up one VL at every
//! backward turn (`super::backward`: down → up at a leaf, fall → rise at
//! the spine of a valley group). So within one VL every dependency between
//! two channels of a path is a forward turn, from a lower channel to a
//! higher one in the order up < rise < fall < down, and the dependencies
//! of one VL — whichever paths and SLs put them there — close no cycle;
//! between VLs dependencies only go upwards. Hence no credit loop, by
//! construction. An intact Dragonfly+'s host paths make no backward turn
//! (VL 0 only); paths with one backward turn need 2 VLs, with two 3.
//!
//! **SLs: one rule per class of path.** A switch maps (SL, in-port,
//! out-port) to a VL; it cannot see how many turns a packet has made. But
//! the class of its in- and out-channel tells it which *turn* the packet
//! makes there, and a path's class — the VL of each kind of turn it makes
//! — tells the VL. An SL's tables are a *program*: per key, the VL of the
//! channel after that turn, where a key is the turn's kind (up → rise, …,
//! down → up: ten) at a switch of one colour of groups (group number mod
//! 3). A path's *signature* is its program: each key it turns through with
//! the VL the rule gives there. Paths share an SL when their signatures
//! agree on every key they both use; the distinct signatures are few (they
//! count kinds of paths, not paths), so the SLs do not grow with the
//! fabric. Paths without a backward turn all agree (every key on VL 0):
//! they take the base SL (`dla.sl`), which is the only SL of an intact
//! Dragonfly+'s host paths.
//!
//! Colours tell apart the turns of one kind that one path makes in two
//! groups on two VLs: a detour or an extra LID through a middle group
//! turns up → global in its first group on VL 0 and again in the middle
//! group on VL 1 (`super::valiant` picks middle groups of a third colour
//! for that). A path that still turns one kind twice at one colour on two
//! VLs (or more than twice backwards, or that the tables do not deliver)
//! is rare; it gets SLs of its own whose tables name the VL of each hop
//! (switch, in-port, out-port), merged first-fit, and one that turns back
//! more than twice a reserve layer: the whole path on one VL above,
//! placed so that no layer's dependencies close a cycle (checked as they
//! are placed).
//!
//! The signatures of all (source switch, LID) paths come from one pass
//! per LID over the switches (each switch's signature from the next
//! one's), on dense tables, LIDs in blocks on all cores.

use std::collections::HashMap;

use super::choice::{slot, CLASSES};
use super::rules::{self, Program, Turns, KEYS};
use super::{backward, Class, Roles};
use crate::deadlock::dynamic_dag::DynamicDag;
use crate::deadlock::virtual_layers::placement::place_paths;
use crate::error::Decline;
use crate::fabric::{Fabric, Lid, Peer, PortNum, SwitchId};
use crate::routing::{Lft, PathSl, Sl2Vl, SlVlTable, SwitchSls, ALL_VL0, NUM_SLS};

/// VLs a lane may use: three (two backward turns).
pub const LANE_VLS: u8 = 3;

/// Where a switch port leads: the switch across it (`NONE` for a CA,
/// port 0 or nothing), the port it arrives on there, and the class of the
/// channel.
#[derive(Clone, Copy)]
struct Far {
    switch: u32,
    port: PortNum,
    class: Class,
}

const NOWHERE: Far = Far {
    switch: NONE,
    port: PortNum::NO_PATH,
    class: Class::Terminal,
};

/// What each switch port leads to, densely.
pub(super) struct Ports {
    /// Per switch, where its ports start in `far` (and where the last
    /// ends).
    start: Vec<usize>,
    far: Vec<Far>,
    /// Per switch, its group's colour.
    colour: Vec<u8>,
    /// `step` of every switch port, `stride` numbers a switch (the most
    /// ports a switch has), so that a pass over every switch's next hop
    /// reads them in order.
    steps: Vec<u32>,
    stride: usize,
}

const NONE: u32 = u32::MAX;

impl Ports {
    pub(super) fn new(fabric: &Fabric, roles: &Roles) -> Self {
        let graph = fabric.graph();
        let mut start = Vec::with_capacity(graph.switch_count());
        let mut far = Vec::new();
        for s in graph.ids() {
            start.push(far.len());
            far.extend(
                graph
                    .peers(s)
                    .iter()
                    .enumerate()
                    .map(|(p, peer)| match peer {
                        Some(Peer::Switch { switch, port }) if p != 0 && *switch != s => Far {
                            switch: switch.idx() as u32,
                            port: *port,
                            class: roles.class(s, *switch),
                        },
                        _ => NOWHERE,
                    }),
            );
        }
        start.push(far.len());
        let stride = start
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
            .max(1);
        let mut steps = vec![NO_STEP; stride * graph.switch_count()];
        for (s, w) in start.windows(2).enumerate() {
            for (slot, far) in steps[s * stride..].iter_mut().zip(&far[w[0]..w[1]]) {
                *slot = Self::packed(far);
            }
        }
        Ports {
            start,
            far,
            colour: graph
                .ids()
                .map(|s| rules::colour(roles.group(s)) as u8)
                .collect(),
            steps,
            stride,
        }
    }

    /// The switch behind `port` of switch `s`, if any.
    pub(super) fn next(&self, s: usize, port: PortNum) -> Option<usize> {
        Some(self.hop(s, port).switch)
            .filter(|&y| y != NONE)
            .map(|y| y as usize)
    }

    /// Where a port leads (`far`), packed into one number: the switch
    /// across it and the slot of the channel's class (`NO_STEP` for no
    /// switch).
    fn packed(far: &Far) -> u32 {
        if far.switch == NONE {
            NO_STEP
        } else {
            far.switch << STEP_CLASS_BITS | class_slot(far.class)
        }
    }

    /// Where `port` of switch `s` leads.
    fn hop(&self, s: usize, port: PortNum) -> Far {
        let at = self.start[s] + port.idx();
        if at < self.start[s + 1] {
            self.far[at]
        } else {
            NOWHERE
        }
    }

    /// The class of the channel into `s` through `port`, and of the one
    /// out (terminal both for a CA, port 0 or nothing).
    fn classes(&self, roles: &Roles, s: SwitchId, port: PortNum) -> (Class, Class) {
        match self.hop(s.idx(), port) {
            far if far.switch == NONE => (Class::Terminal, Class::Terminal),
            far => (
                roles.class(SwitchId::new(far.switch as usize), s),
                far.class,
            ),
        }
    }
}

/// Where `Column::fill` stands with a switch.
const UNKNOWN: u8 = 0;
const ON_STACK: u8 = 1;
const DONE: u8 = 2;

/// Per slot of the class of the channel into a spine (`class_slot`), the
/// slots of the classes out of it that make a forward turn ending a
/// minimal path's climb, one bit each: up → rise, fall or down, and rise
/// or fall → down. No other turn is both forward and not between two
/// global channels.
/// (Eight slots, so that `NO_STEP`'s class bits find none.)
const SHORT_FORWARD: [u32; 8] = [0, 0b11100, 0b10000, 0b10000, 0, 0, 0, 0];

/// A class's slot in `SHORT_FORWARD`: its place in the choice's classes.
fn class_slot(class: Class) -> u32 {
    slot(class) as u32
}

/// `Ports::step`: the far switch above these bits, the class's slot in
/// them; `NO_STEP` where the port leads to no switch.
const STEP_CLASS_BITS: u32 = 3;
const STEP_CLASS: u32 = (1 << STEP_CLASS_BITS) - 1;
const NO_STEP: u32 = u32::MAX;

/// Every switch's turns towards one LID: `tail[x]`, the turns of the
/// path from switch x after its first hop — for the path from x, all its
/// turns between switches. A switch's come from the next one's, so each is
/// worked out once.
pub(super) struct Column<'a> {
    ports: &'a Ports,
    pub(super) tail: Vec<Turns>,
    state: Vec<u8>,
    /// The switches `state` does not have `UNKNOWN` for.
    known: Vec<usize>,
    stack: Vec<usize>,
    /// Per switch (`Column::mark_short`): its next hop towards the LID
    /// (`Ports::step`), whether its own turn qualifies.
    step: Vec<u32>,
    local: Vec<bool>,
    /// The switches `mark_short` did not mark, ascending.
    pub(super) long: Vec<usize>,
}

impl<'a> Column<'a> {
    pub(super) fn new(ports: &'a Ports) -> Self {
        let n = ports.start.len() - 1;
        Column {
            ports,
            tail: vec![Turns::NONE; n],
            state: vec![UNKNOWN; n],
            known: Vec::new(),
            stack: Vec::new(),
            step: vec![NO_STEP; n],
            local: vec![false; n],
            long: Vec::new(),
        }
    }

    /// Finds the switches whose path to the LID delivered by switch `t`
    /// (each switch `x` forwarding it through port `row[x]`) is delivered
    /// and never turns back, as far as a look at its turns one by one
    /// shows (their `tail` would be flat), and lists the others in `long`;
    /// whether there are none. Where a switch's next hop is a switch and
    /// its turns are up → global or down, or global → down, its path takes
    /// at most those three channels in that order (after a down channel no
    /// turn qualifies, so the next switch is `t`): it arrives and makes no
    /// backward turn. On an intact Dragonfly+ that is every switch's path
    /// to every LID of a leaf, and `fill_long` is left for the rest. A
    /// switch in `long` may still have a flat path (through several global
    /// channels, say): `fill_long` finds out.
    pub(super) fn mark_short(&mut self, t: usize, row: &[u8]) -> bool {
        let ports = self.ports;
        for ((step, &port), steps) in self
            .step
            .iter_mut()
            .zip(row)
            .zip(ports.steps.chunks_exact(ports.stride))
        {
            *step = steps.get(usize::from(port)).copied().unwrap_or(NO_STEP);
        }
        // `t` as its own next hop, of no class: its paths qualify, and
        // so does every switch's turn into it.
        self.step[t] = (t as u32) << STEP_CLASS_BITS;
        self.long.clear();
        // Per switch, whether its own turn (into its next hop's channel)
        // qualifies (`NO_STEP`: no switch, no class that qualifies).
        let qualifies = |step: u32| {
            let y = (step >> STEP_CLASS_BITS) as usize;
            let then = self.step.get(y).map_or(0, |&next| next & STEP_CLASS);
            y == t || SHORT_FORWARD[(step & STEP_CLASS) as usize] >> then & 1 != 0
        };
        let mut all = true;
        for (local, &step) in self.local.iter_mut().zip(&self.step) {
            *local = qualifies(step);
            all &= *local;
        }
        if all {
            return true;
        }
        // A switch's path is short and flat where every switch on it
        // qualifies: along qualifying turns it reaches `t` within three
        // hops; the bound only guards the loop.
        for x in 0..self.step.len() {
            let mut y = x;
            for _ in 0..4 {
                if y == t || !self.local[y] {
                    break;
                }
                y = (self.step[y] >> STEP_CLASS_BITS) as usize;
            }
            if y != t {
                self.long.push(x);
            }
        }
        false
    }

    /// Fills `tail` for the LID delivered by switch `t`, each switch
    /// forwarding it through `out(switch)`.
    pub(super) fn fill(&mut self, t: usize, out: impl Fn(usize) -> PortNum) {
        self.fill_from(t, out, 0..self.state.len());
    }

    /// `fill` for the switches `mark_short` put in `long` and those their
    /// paths lead through; the others' `tail` is left as it was.
    fn fill_long(&mut self, t: usize, out: impl Fn(usize) -> PortNum) {
        let long = std::mem::take(&mut self.long);
        self.fill_from(t, out, long.iter().copied());
        self.long = long;
    }

    /// `fill` for the paths of the switches `starts` and those they lead
    /// through.
    fn fill_from(
        &mut self,
        t: usize,
        out: impl Fn(usize) -> PortNum,
        starts: impl Iterator<Item = usize>,
    ) {
        for x in self.known.drain(..) {
            self.state[x] = UNKNOWN;
        }
        self.state[t] = DONE;
        self.known.push(t);
        self.tail[t] = Turns::NONE;
        for start in starts {
            if self.state[start] != UNKNOWN {
                continue;
            }
            // Down the path to a switch whose turns are known, then back
            // up the stack.
            let mut x = start;
            let value = loop {
                let y = self.ports.hop(x, out(x)).switch as usize;
                if y == NONE as usize {
                    break Turns::UNFIT;
                }
                if y == t {
                    break Turns::NONE;
                }
                match self.state[y] {
                    DONE => break self.through(x, y, &out),
                    ON_STACK => break Turns::UNFIT,
                    _ => {
                        self.state[x] = ON_STACK;
                        self.stack.push(x);
                        x = y;
                    }
                }
            };
            self.tail[x] = value;
            self.state[x] = DONE;
            self.known.push(x);
            while let Some(p) = self.stack.pop() {
                self.tail[p] = self.through(p, x, &out);
                self.state[p] = DONE;
                self.known.push(p);
                x = p;
            }
        }
    }

    /// The turns of `x`'s path, which goes on through `y` (whose turns are
    /// known and which is not the LID's switch).
    fn through(&self, x: usize, y: usize, out: &impl Fn(usize) -> PortNum) -> Turns {
        let came = self.ports.hop(x, out(x)).class;
        let next = self.ports.hop(y, out(y)).class;
        match rules::key(usize::from(self.ports.colour[y]), came, next) {
            Some(key) => self.tail[y].after(key),
            None => Turns::UNFIT,
        }
    }
}

/// LIDs per block of `Column` passes: their forwarding entries are read
/// switch by switch into a block that stays in cache.
const BLOCK: usize = 64;

/// LIDs per `Chunk`, the unit of work of a core.
const CHUNK: usize = 4 * BLOCK;

/// The turns of the paths to a range of LIDs: per (switch, LID) a number,
/// `FLAT`, `UNFIT`, `LATER` or one more than the index of its turns in
/// `kinds`, kept only where it is not `FLAT` (most paths are), by switch.
struct Chunk {
    lids: std::ops::Range<usize>,
    /// Per switch x, its paths that are not flat are
    /// `marks[starts[x]..starts[x + 1]]`: (LID, number), LIDs ascending.
    starts: Vec<usize>,
    marks: Vec<(u32, u8)>,
    kinds: Vec<Turns>,
    index: HashMap<Turns, u8, crate::rng::BuildWordHasher>,
}

/// Paths that never turn back.
const FLAT: u8 = 0;
/// More kinds of path in one chunk than numbers: looked at one by one.
const LATER: u8 = 254;
/// Paths that turn back more than twice, make more turns than `Turns`
/// holds, or are not delivered.
const UNFIT: u8 = 255;

impl Chunk {
    fn new(lids: std::ops::Range<usize>) -> Self {
        Chunk {
            lids,
            starts: Vec::new(),
            marks: Vec::new(),
            kinds: Vec::new(),
            index: HashMap::default(),
        }
    }

    /// The numbers of switch `x`'s paths that are not flat.
    fn marks_of(&self, x: usize) -> &[(u32, u8)] {
        &self.marks[self.starts[x]..self.starts[x + 1]]
    }

    /// Works out the turns of every switch's path to each LID of the
    /// range: `Column::mark_short` finds most of them flat at a glance
    /// (on an intact Dragonfly+ every path to a leaf's LID), and only the
    /// rest are followed.
    fn fill(&mut self, ports: &Ports, lfts: &[Lft], dest: &[u32]) {
        let n = lfts.len();
        // (switch, LID, number), LID by LID; sorted by switch at the end.
        let mut found: Vec<(u32, u32, u8)> = Vec::new();
        let mut column = Column::new(ports);
        let mut block = vec![0u8; BLOCK * n];
        for lo in self.lids.clone().step_by(BLOCK) {
            let hi = (lo + BLOCK).min(self.lids.end);
            for (x, lft) in lfts.iter().enumerate() {
                for (j, &port) in lft.as_bytes()[lo..hi].iter().enumerate() {
                    block[j * n + x] = port;
                }
            }
            for lid in lo..hi {
                let t = dest[lid];
                if t == NONE {
                    continue;
                }
                let row = &block[(lid - lo) * n..(lid - lo + 1) * n];
                if column.mark_short(t as usize, row) {
                    continue;
                }
                column.fill_long(t as usize, |x| PortNum::new(row[x]));
                for &x in &column.long {
                    let id = self.id(column.tail[x]);
                    if id != FLAT {
                        found.push((x as u32, lid as u32, id));
                    }
                }
            }
        }
        // By switch, LIDs ascending within each (a stable counting sort).
        self.starts = vec![0; n + 1];
        for &(x, _, _) in &found {
            self.starts[x as usize + 1] += 1;
        }
        for x in 0..n {
            self.starts[x + 1] += self.starts[x];
        }
        let mut next = self.starts.clone();
        self.marks = vec![(0, FLAT); found.len()];
        for (x, lid, id) in found {
            self.marks[next[x as usize]] = (lid, id);
            next[x as usize] += 1;
        }
    }

    /// The number that stands for a path with `turns`.
    fn id(&mut self, turns: Turns) -> u8 {
        if turns.is_flat() {
            return FLAT;
        }
        if turns.is_unfit() {
            return UNFIT;
        }
        if let Some(&id) = self.index.get(&turns) {
            return id;
        }
        if self.kinds.len() + 1 >= usize::from(LATER) {
            return LATER;
        }
        self.kinds.push(turns);
        let id = self.kinds.len() as u8;
        self.index.insert(turns, id);
        id
    }
}

/// The turns of the path from `s` to `dlid` (delivered by `t`), one hop
/// at a time.
fn walk_turns(ports: &Ports, lfts: &[Lft], s: SwitchId, dlid: Lid, t: SwitchId) -> Turns {
    let mut turns = Turns::NONE;
    let (mut at, mut came) = (s, Class::Terminal);
    for _ in 0..ports.colour.len() {
        if at == t {
            return turns;
        }
        let far = ports.hop(at.idx(), lfts[at.idx()].get(dlid));
        if far.switch == NONE {
            return Turns::UNFIT;
        }
        if at != s {
            match rules::key(usize::from(ports.colour[at.idx()]), came, far.class) {
                Some(key) => turns = turns.then(key),
                None => return Turns::UNFIT,
            }
        }
        (at, came) = (SwitchId::new(far.switch as usize), far.class);
    }
    Turns::UNFIT
}

/// A hop: (switch, in-port, out-port).
type Hop = (SwitchId, PortNum, PortNum);

/// The VL of each hop of the paths on one SL of their own (the rare paths
/// no program can hold).
type Lane = HashMap<Hop, u8>;

/// Where per-hop lanes stand in `SwitchSls` until the programs are settled:
/// lane k at `LANE_SL + k`.
const LANE_SL: u8 = 32;

/// Paths on a program's SL that make it give up the SL: at most this many.
const DISSOLVE: u64 = 50_000;

/// The per-hop lanes, first fit.
#[derive(Clone, Default)]
struct HopLanes {
    lanes: Vec<Lane>,
}

impl HopLanes {
    /// The lane `path` fits without a new one.
    fn fit(&mut self, path: &[(Hop, u8)]) -> Option<usize> {
        let k = self.lanes.iter().position(|lane| {
            path.iter()
                .all(|(hop, vl)| lane.get(hop).is_none_or(|v| v == vl))
        })?;
        self.lanes[k].extend(path.iter().copied());
        Some(k)
    }

    /// Puts the path from `s` to `lid` on the first lane it fits, a new one
    /// if none.
    fn place(&mut self, sls: &mut SwitchSls, s: SwitchId, lid: Lid, path: HopPath) {
        let k = self.fit(&path).unwrap_or_else(|| {
            self.lanes.push(path.into_iter().collect());
            self.lanes.len() - 1
        });
        sls.set(s, lid, LANE_SL + k as u8);
    }
}

/// A path's hops between switches with their VLs.
type HopPath = Vec<(Hop, u8)>;

/// What paths are traced on.
struct Tracer<'a> {
    fabric: &'a Fabric,
    ports: &'a Ports,
    lfts: &'a [Lft],
    /// Per LID, the switch that delivers it (`NONE`).
    dest: &'a [u32],
}

/// Gives up the SL of each program (but the flat one, program 0) that
/// carries at most `DISSOLVE` paths (`carried`, per program) where the
/// per-hop lanes already there take all of them, fewest paths first; per
/// program, whether it keeps its SL (`base + program` in `sls` until
/// then).
fn dissolve_small_programs(
    tracer: &Tracer,
    sls: &mut SwitchSls,
    hops: &mut HopLanes,
    base: u8,
    carried: &[u64],
) -> Vec<bool> {
    let mut kept = vec![true; carried.len()];
    let mut by_count: Vec<usize> = (1..carried.len()).collect();
    by_count.sort_by_key(|&p| (carried[p], p));
    for p in by_count {
        if hops.lanes.is_empty() || carried[p] > DISSOLVE {
            continue;
        }
        let sl = base + p as u8;
        let paths: Vec<(SwitchId, Lid, HopPath)> = tracer
            .fabric
            .graph()
            .ids()
            .flat_map(|s| {
                (0..tracer.fabric.lft_len())
                    .filter(move |&l| tracer.dest[l] != NONE && tracer.dest[l] as usize != s.idx())
                    .map(move |l| (s, Lid::new(l)))
            })
            .filter(|&(s, lid)| sls.get(s, lid) == sl)
            .filter_map(|(s, lid)| {
                let t = SwitchId::new(tracer.dest[lid.idx()] as usize);
                Some((s, lid, path_vls(tracer.ports, tracer.lfts, s, lid, t)?))
            })
            .collect();
        let mut trial = hops.clone();
        if paths.iter().all(|(_, _, path)| trial.fit(path).is_some()) {
            for (s, lid, path) in paths {
                hops.place(sls, s, lid, path);
            }
            kept[p] = false;
        }
    }
    kept
}

/// A path's hops between switches with their VLs, if it arrives and turns
/// back at most twice.
fn path_vls(ports: &Ports, lfts: &[Lft], s: SwitchId, dlid: Lid, t: SwitchId) -> Option<HopPath> {
    hop_vls(ports, lfts, s, dlid, t, false)
}

/// `path_vls`, or with `stay_on_top` a path that turns back more than
/// twice: on the top VL from its second backward turn on.
fn hop_vls(
    ports: &Ports,
    lfts: &[Lft],
    s: SwitchId,
    dlid: Lid,
    t: SwitchId,
    stay_on_top: bool,
) -> Option<HopPath> {
    let mut hops = Vec::with_capacity(8);
    let (mut at, mut came, mut in_port, mut vl) = (s, Class::Terminal, PortNum::MANAGEMENT, 0u8);
    for _ in 0..ports.colour.len() {
        if at == t {
            return Some(hops);
        }
        let out = lfts[at.idx()].get(dlid);
        let far = ports.hop(at.idx(), out);
        if far.switch == NONE {
            return None;
        }
        if backward(came, far.class) {
            if vl + 1 < LANE_VLS {
                vl += 1;
            } else if !stay_on_top {
                return None;
            }
        }
        hops.push(((at, in_port, out), vl));
        (at, came, in_port) = (SwitchId::new(far.switch as usize), far.class, far.port);
    }
    None
}

/// The paths that turn back more than twice (`reserve`), on the top VL
/// from their second backward turn on where their dependencies there
/// close no cycle with those of every other path (`sls`: the programs'
/// SLs from `base`, the lanes' from `LANE_SL`) and of those placed
/// before: each on a per-hop lane. The rest, left for reserve layers.
///
/// Such a path's turns after the second are backward ones on one VL,
/// which the order of channels does not rule out: the check does. Every
/// other dependency on the top VL is a forward turn, so few close a
/// cycle: on the damaged 9-group fabrics of the tests, paths between two
/// spines that lost their global cables (no path between them turns back
/// less than three times) then need no fourth VL.
fn onto_the_top_vl(
    tracer: &Tracer,
    programs: &[Program],
    base: u8,
    sls: &mut SwitchSls,
    hops: &mut HopLanes,
    reserve: Vec<(SwitchId, Lid)>,
) -> Vec<(SwitchId, Lid)> {
    if reserve.is_empty() {
        return reserve;
    }
    let graph = tracer.fabric.graph();
    let Some(mut top) = top_dependencies(tracer, programs, base, sls, hops) else {
        return reserve;
    };
    let mut left = Vec::new();
    for (s, lid) in reserve {
        let t = SwitchId::new(tracer.dest[lid.idx()] as usize);
        let Some(path) = hop_vls(tracer.ports, tracer.lfts, s, lid, t, true) else {
            left.push((s, lid));
            continue;
        };
        let channel = |&((at, _, out), vl): &(Hop, u8)| (graph.channel(at, out) as u32, vl);
        let mut added = Vec::new();
        let fits = path
            .windows(2)
            .all(|w| match (channel(&w[0]), channel(&w[1])) {
                ((a, TOP), (b, TOP)) => match top.insert(a, b) {
                    Ok(new) => {
                        if new {
                            added.push((a, b));
                        }
                        true
                    }
                    Err(_) => false,
                },
                _ => true,
            });
        if fits {
            hops.place(sls, s, lid, path);
        } else {
            for (a, b) in added {
                top.remove(a, b);
            }
            left.push((s, lid));
        }
    }
    left
}

/// The top VL of the lanes.
const TOP: u8 = LANE_VLS - 1;

/// The dependencies on the top VL of every path on a program's SL or a
/// lane's (`onto_the_top_vl`), between channels (`SwitchGraph::channel`);
/// `None` if they close a cycle (they cannot: all are forward turns).
fn top_dependencies(
    tracer: &Tracer,
    programs: &[Program],
    base: u8,
    sls: &SwitchSls,
    hops: &HopLanes,
) -> Option<DynamicDag> {
    let graph = tracer.fabric.graph();
    let ports = tracer.ports;
    let mut top = DynamicDag::new(graph.channel_count());
    for x in graph.ids() {
        for l in (0..tracer.fabric.lft_len()).filter(|&l| tracer.dest[l] != NONE) {
            let (lid, t) = (Lid::new(l), SwitchId::new(tracer.dest[l] as usize));
            let sl = sls.get(x, lid);
            // The base SL's paths are all on VL 0.
            if sl == base || x == t {
                continue;
            }
            let vl_of = |at: SwitchId, hop: Hop, came: Class, to: Class| -> u8 {
                if sl >= LANE_SL {
                    let lane = hops.lanes.get(usize::from(sl - LANE_SL));
                    lane.and_then(|lane| lane.get(&hop)).copied().unwrap_or(0)
                } else {
                    let colour = usize::from(ports.colour[at.idx()]);
                    let program = programs.get(usize::from(sl - base));
                    rules::key(colour, came, to)
                        .zip(program)
                        .map_or(0, |(key, p)| p.vl(key))
                }
            };
            let (mut at, mut came, mut in_port) = (x, Class::Terminal, PortNum::MANAGEMENT);
            let mut held: Option<(u32, u8)> = None;
            for _ in 0..ports.colour.len() {
                if at == t {
                    break;
                }
                let out = tracer.lfts[at.idx()].get(lid);
                let far = ports.hop(at.idx(), out);
                if far.switch == NONE {
                    break;
                }
                let vl = vl_of(at, (at, in_port, out), came, far.class);
                let channel = graph.channel(at, out) as u32;
                if let Some((a, TOP)) = held.filter(|_| vl == TOP) {
                    top.insert(a, channel).ok()?;
                }
                held = Some((channel, vl));
                (at, came, in_port) = (SwitchId::new(far.switch as usize), far.class, far.port);
            }
        }
    }
    Some(top)
}

/// What `assign` decided.
pub struct Lanes {
    pub path_sl: PathSl,
    /// `None` when every path is on one SL and VL 0.
    pub sl2vl: Option<Sl2Vl>,
    /// SLs from the base SL on: one per program that carries paths, then
    /// the per-hop lanes, then the reserve layers.
    pub programs: usize,
    pub hop_lanes: usize,
    pub reserve_layers: u8,
    pub vls: u8,
}

/// The SL of each kind of path: the first program of the library it fits,
/// SLs numbered from the base SL over the programs that carry paths.
struct Rules {
    library: Vec<Program>,
    /// Per program of the library, its SL if it carries paths.
    sl: Vec<Option<u8>>,
}

impl Rules {
    /// The library for the most backward turns of `kinds`, and SLs for
    /// the flat program and those `kinds` take.
    fn new(base: u8, kinds: &[Turns]) -> Self {
        let turns = kinds.iter().map(|t| t.backward()).max().unwrap_or(0);
        let library = rules::library(turns);
        let mut used = vec![false; library.len()];
        used[0] = true;
        for &t in kinds {
            if let Some(p) = library.iter().position(|p| p.fits(t)) {
                used[p] = true;
            }
        }
        let mut next = base;
        let sl = used
            .iter()
            .map(|&u| {
                u.then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect();
        Rules { library, sl }
    }

    /// The SL of a path with `turns`; `None` if it fits no program.
    fn sl_of(&self, turns: Turns) -> Option<u8> {
        if turns.is_flat() {
            return self.sl[0];
        }
        let p = self.library.iter().position(|p| p.fits(turns))?;
        self.sl[p]
    }

    /// The programs that carry paths, by SL.
    fn programs(&self) -> Vec<Program> {
        self.library
            .iter()
            .zip(&self.sl)
            .filter(|(_, sl)| sl.is_some())
            .map(|(p, _)| *p)
            .collect()
    }
}

/// SLs and SL2VL tables for the tables `lfts` (module comment).
pub fn assign(
    fabric: &Fabric,
    roles: &Roles,
    lfts: &[Lft],
    base: u8,
) -> Result<Lanes, (Decline, String)> {
    let ports = Ports::new(fabric, roles);
    let dest: Vec<u32> = (0..fabric.lft_len())
        .map(|l| {
            fabric
                .lid_switch(Lid::new(l))
                .map_or(NONE, |s| s.idx() as u32)
        })
        .collect();
    let mut chunks: Vec<Chunk> = (0..fabric.lft_len())
        .step_by(CHUNK)
        .map(|lo| Chunk::new(lo..(lo + CHUNK).min(fabric.lft_len())))
        .collect();
    let t0 = std::time::Instant::now();
    crate::parallel::for_each_row(&mut chunks, |_, c| c.fill(&ports, lfts, &dest));
    log::debug!(
        "dla: turns of every path in {} ms",
        t0.elapsed().as_millis()
    );
    let mut kinds: Vec<Turns> = chunks
        .iter()
        .flat_map(|c| c.kinds.iter().copied())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let rules = Rules::new(base, &kinds);
    let programs = rules.programs();
    let out_of_sls = |needed: usize| {
        (
            Decline::OutOfSls,
            format!("the Dragonfly+'s paths need {needed} SLs from dla.sl = {base} on; set dla.sl lower"),
        )
    };
    if usize::from(base) + programs.len() > NUM_SLS {
        return Err(out_of_sls(programs.len()));
    }
    // Per chunk, the SL of each of its numbers (`UNFIT` for a kind that
    // fits no program, or that `LATER` looks at).
    let remaps: Vec<Vec<u8>> = chunks
        .iter()
        .map(|c| {
            let mut m = vec![UNFIT; 256];
            m[usize::from(FLAT)] = base;
            for (i, &t) in c.kinds.iter().enumerate() {
                m[i + 1] = rules.sl_of(t).unwrap_or(UNFIT);
            }
            m
        })
        .collect();
    let mut sls = SwitchSls::filled(fabric, base);
    let mut rows: Vec<(&mut [u8], Vec<Lid>, [u64; NUM_SLS])> = sls
        .rows_mut()
        .map(|r| (r, Vec::new(), [0; NUM_SLS]))
        .collect();
    crate::parallel::for_each_row(&mut rows, |x, (row, left, count)| {
        // Flat paths keep the base SL the rows start with, and count for
        // no program but the flat one.
        for (c, remap) in chunks.iter().zip(&remaps) {
            for &(lid, id) in c.marks_of(x) {
                let lid = lid as usize;
                match remap[usize::from(id)] {
                    UNFIT => left.push(Lid::new(lid)),
                    sl => {
                        row[lid] = sl;
                        count[usize::from(sl) & 0xf] += 1;
                    }
                }
            }
        }
    });
    let left: Vec<(SwitchId, Lid)> = rows
        .iter()
        .enumerate()
        .flat_map(|(x, (_, l, _))| l.iter().map(move |&lid| (SwitchId::new(x), lid)))
        .collect();
    let carried = rows.iter().fold([0u64; NUM_SLS], |mut a, (_, _, c)| {
        a.iter_mut().zip(c).for_each(|(a, c)| *a += c);
        a
    });
    drop(rows);
    drop(chunks);
    log::debug!("dla: SLs by path in {} ms", t0.elapsed().as_millis());
    // The rare paths no program holds: per-hop lanes, or reserve layers.
    let mut hops = HopLanes::default();
    let mut reserve: Vec<(SwitchId, Lid)> = Vec::new();
    for (s, lid) in left {
        let t = SwitchId::new(dest[lid.idx()] as usize);
        if let Some(sl) = rules.sl_of(walk_turns(&ports, lfts, s, lid, t)) {
            sls.set(s, lid, sl);
            continue;
        }
        match path_vls(&ports, lfts, s, lid, t) {
            Some(path) => hops.place(&mut sls, s, lid, path),
            None => reserve.push((s, lid)),
        }
    }
    let tracer = Tracer {
        fabric,
        ports: &ports,
        lfts,
        dest: &dest,
    };
    let kept = dissolve_small_programs(
        &tracer,
        &mut sls,
        &mut hops,
        base,
        &carried[usize::from(base)..usize::from(base) + programs.len()],
    );
    let reserve = onto_the_top_vl(&tracer, &programs, base, &mut sls, &mut hops, reserve);
    // SLs from the base on: the programs kept, the lanes, the reserve.
    let programs: Vec<Program> = programs
        .iter()
        .zip(&kept)
        .filter(|(_, &k)| k)
        .map(|(p, _)| *p)
        .collect();
    let first_lane = usize::from(base) + programs.len();
    let first_reserve = first_lane + hops.lanes.len();
    if first_reserve + usize::from(!reserve.is_empty()) > NUM_SLS {
        return Err(out_of_sls(
            first_reserve - usize::from(base) + usize::from(!reserve.is_empty()),
        ));
    }
    let mut renumber: Vec<u8> = (0..=u8::MAX).collect();
    let mut next = base;
    for (p, &k) in kept.iter().enumerate() {
        if k {
            renumber[usize::from(base) + p] = next;
            next += 1;
        }
    }
    for k in 0..hops.lanes.len() {
        renumber[usize::from(LANE_SL) + k] = (first_lane + k) as u8;
    }
    sls.map(|sl| renumber[usize::from(sl)]);
    let layers = place_paths(fabric, lfts, &reserve, (NUM_SLS - first_reserve) as u8).map_err(|e| {
        (
            Decline::TooDamaged,
            format!(
                "{} paths of this damaged Dragonfly+ make more than two backward turns and the SLs left do not \
                 keep them free of credit loops ({e}); the fabric is too damaged for dla",
                reserve.len()
            ),
        )
    })?;
    for (&(s, lid), &layer) in reserve.iter().zip(&layers) {
        sls.set(s, lid, first_reserve as u8 + layer);
    }
    let reserve_layers = layers.iter().max().map_or(0, |&l| l + 1);
    let lanes = hops.lanes;
    let lane_vls = programs
        .iter()
        .flat_map(|p| (0..KEYS).map(|k| p.vl(k)))
        .chain(lanes.iter().flat_map(|l| l.values().copied()))
        .max()
        .unwrap_or(0)
        + 1;
    if programs.len() == 1 && lanes.is_empty() && reserve.is_empty() {
        return Ok(Lanes {
            path_sl: PathSl::Uniform(base),
            sl2vl: None,
            programs: 1,
            hop_lanes: 0,
            reserve_layers: 0,
            vls: 1,
        });
    }
    let reserve_sls: Vec<(u8, u8)> = (0..reserve_layers)
        .map(|l| (first_reserve as u8 + l, lane_vls + l))
        .collect();
    log::debug!("dla: lanes settled in {} ms", t0.elapsed().as_millis());
    let sl2vl = Tables {
        fabric,
        roles,
        ports: &ports,
        base,
    }
    .build(&programs, &lanes, &reserve_sls);
    Ok(Lanes {
        sl2vl: Some(sl2vl),
        path_sl: PathSl::PerSourceSwitch(sls),
        programs: programs.len(),
        hop_lanes: lanes.len(),
        reserve_layers,
        vls: lane_vls + reserve_layers,
    })
}

/// What the SL-to-VL tables are built from.
struct Tables<'a> {
    fabric: &'a Fabric,
    roles: &'a Roles<'a>,
    ports: &'a Ports,
    base: u8,
}

impl Tables<'_> {
    /// Every switch's SL-to-VL tables: on SL base + p, program p's VL for
    /// the turn each (in-port, out-port) makes at the switch's colour (VL 0
    /// into or out of a CA or port 0); then on each per-hop lane's SL, its
    /// VL for the hops it makes; on a reserve SL, the layer's VL
    /// everywhere. CA ports send every SL in use on VL 0.
    fn build(&self, programs: &[Program], lanes: &[Lane], reserve: &[(u8, u8)]) -> Sl2Vl {
        let graph = self.fabric.graph();
        let base = usize::from(self.base);
        // Per colour and (in-class, out-class): the table.
        let class_table = |c: usize, from: Class, to: Class| -> SlVlTable {
            let mut table = ALL_VL0;
            if let Some(k) = rules::key(c, from, to) {
                for (p, program) in programs.iter().enumerate() {
                    table[base + p] = program.vl(k);
                }
            }
            for &(sl, vl) in reserve {
                table[usize::from(sl)] = vl;
            }
            table
        };
        let by_class: Vec<SlVlTable> = (0..rules::COLOURS)
            .flat_map(|c| {
                CLASSES
                    .iter()
                    .flat_map(move |&from| CLASSES.iter().map(move |&to| class_table(c, from, to)))
            })
            .collect();
        let mut tables = Sl2Vl::new(self.fabric, ALL_VL0);
        for s in graph.ids() {
            let colour = usize::from(self.ports.colour[s.idx()]);
            let classes: Vec<(usize, usize)> = (0..graph.port_slots(s))
                .map(|p| {
                    let (i, o) = self.ports.classes(self.roles, s, PortNum::new(p as u8));
                    (slot(i), slot(o))
                })
                .collect();
            for (i, &(from, _)) in classes.iter().enumerate() {
                for (o, &(_, to)) in classes.iter().enumerate().filter(|&(o, _)| o != i) {
                    let table = &by_class[(colour * CLASSES.len() + from) * CLASSES.len() + to];
                    if *table != ALL_VL0 {
                        tables.set_switch(s, PortNum::new(i as u8), PortNum::new(o as u8), *table);
                    }
                }
            }
        }
        let first_lane = base + programs.len();
        for (k, lane) in lanes.iter().enumerate() {
            for (&(s, i, o), &vl) in lane {
                let mut table = *tables.switch_table(s, i, o);
                table[first_lane + k] = vl;
                tables.set_switch(s, i, o, table);
            }
        }
        let used = first_lane + lanes.len();
        for sl in (base..used).chain(reserve.iter().map(|&(sl, _)| usize::from(sl))) {
            tables.set_ca(sl as u8, 0);
        }
        tables
    }
}
