//! The SL rules of a Dragonfly+: which VL each kind of turn takes on each
//! SL, and which paths an SL can carry.
//!
//! A switch maps (SL, in-port, out-port) to a VL. The classes of its in-
//! and out-channel name the *kind* of turn a packet makes there (up →
//! rise, …, down → up: ten kinds), and its group's *colour* (group number
//! mod 3) is the rest of the *key*. A *program* gives every key a VL: it is
//! what one SL's tables say. A path *fits* a program when the VLs the
//! program gives its turns, in order, never go down and go up at every
//! backward turn (`super::backward`) — the rule of `super::lanes`, which
//! keeps every VL free of credit loops. A path's *turns* (`Turns`) are its
//! keys in order; a path fits or not whatever its source and destination,
//! so SLs go to kinds of path, not to paths.
//!
//! Programs are built from *styles*, a VL per kind, one style per colour:
//! - flat: every turn on VL 0 (paths that never turn back);
//! - at most one backward turn (two VLs): *turn late* (forward turns on
//!   VL 0, the bounce down → up and what follows on VL 1: a detour at the
//!   destination's end, or to a spine), *turn early* (a bounce at the
//!   source's end: the turn down on VL 0, the bounce and all after on VL
//!   1), *valley* (through a middle group numbered below both neighbours:
//!   falling on VL 0, rising and down after on VL 1), and *middle* for a
//!   bounce through a leaf of a middle group (arriving down on VL 0,
//!   bouncing and leaving on VL 1) with *arrive late* around it;
//! - two backward turns (three VLs): *early* and *late* over three VLs,
//!   so that an early group's bounce (VL 1) can come before a late group's
//!   (VL 2), and *middle*.
//!
//! Two turns of one kind on two VLs in one path fit only where their
//! groups' colours differ: a bounce at each end of a path (early at the
//! source's colour, late at the destination's), a bounce through a middle
//! group (middle at its colour). `super::valiant` picks middle groups of a
//! third colour for that; *through* programs carry the extra LIDs' paths
//! through such a group even where they bounce at the source's end too
//! (from a spine of the source group: early there, through in the
//! middle).

use super::Class;

/// Colours of groups in the keys.
pub const COLOURS: usize = 3;

/// Kinds of turn between two inter-switch channels, in this order: at a
/// spine, from up, rise or fall to rise, fall or down (up → up, …), and at
/// a leaf down → up.
pub const KINDS: usize = 10;

/// Keys: kinds of turn at each colour.
pub const KEYS: usize = COLOURS * KINDS;

/// The colour of group `g` in the keys.
pub fn colour(g: usize) -> usize {
    g % COLOURS
}

/// The kind of the turn from a channel of class `from` to one of class
/// `to`; `None` where either is no channel between switches (or the turn
/// cannot occur on a Dragonfly+).
fn kind(from: Class, to: Class) -> Option<usize> {
    let into_spine = |c: Class| match c {
        Class::Up => Some(0),
        Class::Rise => Some(1),
        Class::Fall => Some(2),
        _ => None,
    };
    let out_of_spine = |c: Class| match c {
        Class::Rise => Some(0),
        Class::Fall => Some(1),
        Class::Down => Some(2),
        _ => None,
    };
    match (from, to) {
        (Class::Down, Class::Up) => Some(BOUNCE),
        _ => Some(into_spine(from)? * 3 + out_of_spine(to)?),
    }
}

/// The kinds that turn backwards: fall → rise (a valley), down → up (a
/// bounce).
const VALLEY: usize = 6;
const BOUNCE: usize = 9;

/// The key of a turn from `from` to `to` at a switch of colour `c`.
pub fn key(c: usize, from: Class, to: Class) -> Option<usize> {
    Some(c * KINDS + kind(from, to)?)
}

fn is_backward(key: usize) -> bool {
    matches!(key % KINDS, VALLEY | BOUNCE)
}

/// A path's turns: its keys in order, 5 bits each from the low end (key +
/// 1), up to 12; the count of backward turns in bits 60–61; `UNFIT` for a
/// path that turns back more than twice, has more turns, or is not
/// delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Turns(u64);

const TURN_BITS: u64 = 5;
const MAX_TURNS: u64 = 12;
const TURN_MASK: u64 = (1 << (TURN_BITS * MAX_TURNS)) - 1;
const BACKWARD_SHIFT: u64 = 60;

impl Turns {
    /// No turn between switches: a path of at most one hop between them.
    pub const NONE: Turns = Turns(0);
    pub const UNFIT: Turns = Turns(1 << 63);

    pub fn is_unfit(self) -> bool {
        self.0 & Self::UNFIT.0 != 0
    }

    /// Backward turns.
    pub fn backward(self) -> u8 {
        (self.0 >> BACKWARD_SHIFT & 3) as u8
    }

    /// Whether the path fits no program but the flat one.
    pub fn is_flat(self) -> bool {
        !self.is_unfit() && self.backward() == 0
    }

    /// The turn at `key`, then `self`.
    pub fn after(self, key: usize) -> Turns {
        let backward = self.backward() + u8::from(is_backward(key));
        if self.is_unfit() || self.0 & TURN_MASK >> TURN_BITS != self.0 & TURN_MASK || backward > 2
        {
            return Self::UNFIT;
        }
        Turns(
            (self.0 & TURN_MASK) << TURN_BITS
                | (key as u64 + 1)
                | u64::from(backward) << BACKWARD_SHIFT,
        )
    }

    /// `self`, then the turn at `key`.
    pub fn then(self, key: usize) -> Turns {
        let len = (0..MAX_TURNS)
            .find(|&i| self.0 >> (TURN_BITS * i) & 31 == 0)
            .unwrap_or(MAX_TURNS);
        let backward = self.backward() + u8::from(is_backward(key));
        if self.is_unfit() || len == MAX_TURNS || backward > 2 {
            return Self::UNFIT;
        }
        Turns(
            (self.0 & TURN_MASK)
                | (key as u64 + 1) << (TURN_BITS * len)
                | u64::from(backward) << BACKWARD_SHIFT,
        )
    }

    /// The keys, in order.
    fn keys(self) -> impl Iterator<Item = usize> {
        (0..MAX_TURNS)
            .map(move |i| (self.0 >> (TURN_BITS * i) & 31) as usize)
            .take_while(|&k| k != 0)
            .map(|k| k - 1)
    }
}

/// A style: the VL of each kind of turn, in `kind`'s order (up → rise, up
/// → fall, up → down, rise → rise, rise → fall, rise → down, fall → rise,
/// fall → fall, fall → down, down → up).
type Style = [u8; KINDS];

const FLAT: Style = [0; KINDS];
/// One backward turn, at the destination's end (or into a spine).
const TURN_LATE: Style = [0, 0, 1, 0, 0, 0, 1, 0, 0, 1];
/// One backward turn, at the source's end (or out of a spine).
const TURN_EARLY: Style = [1, 1, 0, 1, 1, 1, 1, 1, 1, 1];
/// One backward turn, at a valley.
const VALLEY_TURN: Style = [0, 0, 0, 1, 1, 1, 1, 0, 1, 1];
/// Around a middle group: forward on VL 0 but arriving down on VL 1.
const ARRIVE_LATE: Style = [0, 0, 1, 0, 0, 1, 1, 0, 1, 1];
/// A middle group bounced through: arriving down on VL 0, leaving on 1.
const MIDDLE: Style = [1, 1, 1, 1, 1, 0, 1, 1, 0, 1];
/// Two backward turns: the early group's bounce on VL 1 …
const EARLY: Style = [1, 1, 0, 1, 1, 2, 2, 1, 2, 1];
/// … and the late group's on VL 2.
const LATE: Style = [0, 0, 2, 0, 0, 1, 1, 0, 1, 2];
/// An intermediate group after an early turn (two backward turns): a
/// path from a spine of the source group bounces there (`EARLY`, VL 1),
/// crosses into the intermediate group, arrives down on VL 1, bounces
/// (VL 2) and leaves for the destination group on VL 2, where `EARLY`
/// takes it down on VL 2. A host's path through the same group, without
/// the early bounce, fits it too (VLs 1, 1, 2, 2, 2).
const THROUGH: Style = [2, 2, 2, 2, 2, 1, 2, 2, 1, 2];

/// What one SL's tables say: the VL of every key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program([u8; KEYS]);

impl Program {
    /// `special` at colour `k`, `rest` at the others.
    fn of(special: &Style, k: usize, rest: &Style) -> Program {
        let mut vls = [0; KEYS];
        for c in 0..COLOURS {
            let style = if c == k { special } else { rest };
            vls[c * KINDS..(c + 1) * KINDS].copy_from_slice(style);
        }
        Program(vls)
    }

    fn everywhere(style: &Style) -> Program {
        Self::of(style, 0, style)
    }

    /// The VL of the channel after a turn at `key`.
    pub fn vl(&self, key: usize) -> u8 {
        self.0[key]
    }

    /// Whether a path with `turns` fits (module comment): from VL 0, the
    /// VLs of its turns never go down and go up at every backward turn.
    pub fn fits(&self, turns: Turns) -> bool {
        let mut vl = 0;
        !turns.is_unfit()
            && turns.keys().all(|key| {
                let next = self.0[key];
                let ok = if is_backward(key) {
                    next > vl
                } else {
                    next >= vl
                };
                vl = next;
                ok
            })
    }
}

/// The programs an SL may take, tried in this order (each path takes the
/// first it fits; SLs go only to programs that carry a path): within two
/// VLs when no path turns back twice (`turns` ≤ 1), else within three.
pub fn library(turns: u8) -> Vec<Program> {
    let mut programs = vec![Program::everywhere(&FLAT)];
    if turns <= 1 {
        programs.extend([
            Program::everywhere(&TURN_LATE),
            Program::everywhere(&TURN_EARLY),
            Program::everywhere(&VALLEY_TURN),
        ]);
        programs.extend((0..COLOURS).map(|k| Program::of(&MIDDLE, k, &ARRIVE_LATE)));
    } else {
        programs.extend((0..COLOURS).map(|k| Program::of(&EARLY, k, &LATE)));
        programs.extend([Program::everywhere(&LATE), Program::everywhere(&EARLY)]);
        // Before the middle programs: the extra LIDs' paths through an
        // intermediate group of a third colour fit both, from leaves and
        // spines alike, so they share these three SLs.
        programs.extend((0..COLOURS).map(|k| Program::of(&THROUGH, k, &EARLY)));
        programs.extend((0..COLOURS).map(|k| Program::of(&MIDDLE, k, &LATE)));
    }
    programs
}

#[cfg(test)]
mod tests {
    use super::*;
    use Class::{Down, Fall, Rise, Up};

    /// The turns of a path through switches of the given colours, from
    /// the classes of its channels.
    fn path(colours: &[usize], classes: &[Class]) -> Turns {
        classes
            .windows(2)
            .zip(&colours[1..])
            .fold(Turns::NONE, |t, (w, &c)| {
                t.then(key(c, w[0], w[1]).unwrap())
            })
    }

    fn first_fit(turns: Turns, max: u8) -> Option<usize> {
        library(max).iter().position(|p| p.fits(turns))
    }

    #[test]
    fn every_kind_of_path_fits_a_program_of_few_vls() {
        // A host path: up, rise, down: flat.
        let minimal = path(&[0, 0, 1, 1], &[Up, Rise, Down]);
        assert_eq!(first_fit(minimal, 1), Some(0));
        // Bounces at the destination's end and at the source's end.
        let late = path(&[0, 0, 1, 1, 1, 1], &[Up, Rise, Down, Up, Down]);
        let early = path(&[0, 0, 0, 0, 1, 1], &[Up, Down, Up, Fall, Down]);
        assert_eq!(late.backward(), 1);
        assert_eq!(first_fit(late, 1), Some(1));
        assert_eq!(first_fit(early, 1), Some(2));
        // A valley, 2 -> 0 -> 1: falling, then rising.
        let valley = path(&[2, 2, 0, 1, 1], &[Up, Fall, Rise, Down]);
        assert_eq!(first_fit(valley, 1), Some(3));
        // A bounce through a middle group of a third colour.
        let middle = path(&[0, 0, 1, 1, 1, 2, 2], &[Up, Rise, Down, Up, Rise, Down]);
        assert_eq!(first_fit(middle, 1), Some(4 + 1));
        // Two bounces: early at the source's colour, late at the
        // destination's, within three VLs.
        let both = path(&[0, 0, 0, 1, 1, 1, 1], &[Down, Up, Rise, Down, Up, Down]);
        assert_eq!(both.backward(), 2);
        assert_eq!(first_fit(both, 2), Some(1));
        // An extra LID's path through an intermediate group of a third
        // colour, from a spine of the source group: bounces there and in
        // the intermediate group.
        let through = path(
            &[0, 0, 0, 1, 1, 1, 2, 2],
            &[Down, Up, Rise, Down, Up, Rise, Down],
        );
        assert_eq!(through.backward(), 2);
        assert_eq!(first_fit(through, 2), Some(6 + 1));
        // From a leaf it fits the same program.
        let from_leaf = path(&[0, 0, 1, 1, 1, 2, 2], &[Up, Rise, Down, Up, Rise, Down]);
        assert_eq!(first_fit(from_leaf, 2), Some(6 + 1));
        for p in library(2) {
            assert!((0..KEYS).all(|k| p.vl(k) < 3));
        }
        for p in library(1) {
            assert!((0..KEYS).all(|k| p.vl(k) < 2));
        }
    }

    #[test]
    fn one_kind_of_turn_on_two_vls_at_one_colour_fits_nothing() {
        // Bounces at both ends in groups of one colour.
        let both = path(&[0, 0, 0, 0, 0, 0, 0], &[Down, Up, Rise, Down, Up, Down]);
        assert_eq!(first_fit(both, 2), None);
        // A bounce through a middle group of the source's colour.
        let middle = path(&[0, 0, 0, 0, 0, 1, 1], &[Up, Rise, Down, Up, Rise, Down]);
        assert_eq!(first_fit(middle, 1), None);
        // Three backward turns.
        let three = Turns::NONE.then(BOUNCE).then(BOUNCE).then(BOUNCE);
        assert!(three.is_unfit());
    }

    #[test]
    fn turns_read_the_same_built_from_either_end() {
        let keys = [3, 9, 12, 19, 25];
        let forward = keys.iter().fold(Turns::NONE, |t, &k| t.then(k));
        let backward = keys.iter().rev().fold(Turns::NONE, |t, &k| t.after(k));
        assert_eq!(forward, backward);
        assert_eq!(forward.keys().collect::<Vec<_>>(), keys);
        assert_eq!(forward.backward(), 2);
    }
}
