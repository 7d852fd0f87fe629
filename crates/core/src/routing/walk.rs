//! Following forwarding tables hop by hop. This is the one walker: path
//! analysis, effective bisection bandwidth, the deadlock passes, the
//! multipath analysis and OpenSM's hop tables all step through the tables
//! with `step`, and fail in one way, `Undelivered`.

use std::fmt;

use super::Lft;
use crate::fabric::{Fabric, Lid, Peer, PortNum, PortRef, SwitchId};

/// Why a packet does not arrive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undelivered {
    /// The source port is not cabled to a switch.
    NotCabled,
    /// A switch has no entry for the LID (or points at an uncabled port).
    BlackHole { switch: SwitchId, port: PortNum },
    /// The packet passes more switches than the fabric has: it circles.
    Loop { switch: SwitchId },
    /// Delivered to a port that does not own the LID.
    Misdelivered { to: PortRef },
}

impl fmt::Display for Undelivered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undelivered::NotCabled => write!(f, "source port is not cabled to a switch"),
            Undelivered::BlackHole { switch, port } => {
                write!(f, "black hole at {switch} (port {port})")
            }
            Undelivered::Loop { switch } => write!(f, "forwarding loop through {switch}"),
            Undelivered::Misdelivered { to } => {
                write!(f, "delivered to {} port {}", to.node, to.port)
            }
        }
    }
}

impl Undelivered {
    /// A short name for counting failures by kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Undelivered::NotCabled => "source not cabled",
            Undelivered::BlackHole { .. } => "black hole",
            Undelivered::Loop { .. } => "forwarding loop",
            Undelivered::Misdelivered { .. } => "misdelivered",
        }
    }
}

/// One switch of a path: where the packet came in and where it leaves
/// (port 0 at the last switch when the LID is the switch's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub switch: SwitchId,
    pub in_port: PortNum,
    pub out_port: PortNum,
}

/// What the tables make a switch do with a packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Handed to the LID's owner: the switch itself (out-port 0) or a CA.
    Delivered,
    /// Sent on to another switch, which receives it on `in_port`.
    Forward {
        to: SwitchId,
        in_port: PortNum,
    },
    Failed(Undelivered),
}

/// The out-port switch `s` uses for `dlid`, and what follows.
pub fn step(fabric: &Fabric, lfts: &[Lft], s: SwitchId, dlid: Lid) -> (PortNum, Step) {
    let out = lfts.get(s.idx()).map_or(PortNum::NO_PATH, |t| t.get(dlid));
    let black_hole = Step::Failed(Undelivered::BlackHole {
        switch: s,
        port: out,
    });
    if out.is_no_path() {
        return (out, black_hole);
    }
    let arrive = |at: PortRef| {
        if fabric.lid_owner(dlid) == Some(at) {
            Step::Delivered
        } else {
            Step::Failed(Undelivered::Misdelivered { to: at })
        }
    };
    let next = match fabric.graph().peer(s, out) {
        _ if out.is_management() => arrive(PortRef::new(fabric.switches()[s], PortNum::MANAGEMENT)),
        None => black_hole,
        Some(Peer::Ca(at)) => arrive(at),
        Some(Peer::Switch { switch, port }) => Step::Forward {
            to: switch,
            in_port: port,
        },
    };
    (out, next)
}

/// A path through the tables as an iterator of hops; the last item is the
/// delivering hop or the reason the packet does not arrive.
pub struct Walk<'a> {
    fabric: &'a Fabric,
    lfts: &'a [Lft],
    dlid: Lid,
    at: Option<(SwitchId, PortNum)>,
    failure: Option<Undelivered>,
    hops: usize,
}

impl<'a> Walk<'a> {
    /// The path of a packet a CA (or any) port `src` sends to `dlid`.
    pub fn from_port(fabric: &'a Fabric, lfts: &'a [Lft], src: PortRef, dlid: Lid) -> Self {
        let entry = fabric
            .port(src)
            .and_then(|p| p.remote)
            .and_then(|r| fabric.switch_id(r.node).map(|s| (s, r.port)));
        let failure = entry.is_none().then_some(Undelivered::NotCabled);
        Walk {
            fabric,
            lfts,
            dlid,
            at: entry,
            failure,
            hops: 0,
        }
    }

    /// The path from switch `s` itself (entering on port 0).
    pub fn from_switch(fabric: &'a Fabric, lfts: &'a [Lft], s: SwitchId, dlid: Lid) -> Self {
        Walk {
            fabric,
            lfts,
            dlid,
            at: Some((s, PortNum::MANAGEMENT)),
            failure: None,
            hops: 0,
        }
    }

    /// The whole path, or why it does not arrive.
    pub fn collect_path(self) -> Result<Vec<Hop>, Undelivered> {
        self.collect()
    }
}

impl Iterator for Walk<'_> {
    type Item = Result<Hop, Undelivered>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.failure.take() {
            return Some(Err(e));
        }
        let (switch, in_port) = self.at.take()?;
        self.hops += 1;
        if self.hops > self.fabric.switch_count() {
            return Some(Err(Undelivered::Loop { switch }));
        }
        let (out_port, next) = step(self.fabric, self.lfts, switch, self.dlid);
        let hop = Hop {
            switch,
            in_port,
            out_port,
        };
        match next {
            Step::Delivered => Some(Ok(hop)),
            Step::Forward { to, in_port } => {
                self.at = Some((to, in_port));
                Some(Ok(hop))
            }
            Step::Failed(e) => Some(Err(e)),
        }
    }
}

/// The switches a packet from port `src` to `dlid` passes, with in- and
/// out-ports.
pub fn trace(
    fabric: &Fabric,
    lfts: &[Lft],
    src: PortRef,
    dlid: Lid,
) -> Result<Vec<Hop>, Undelivered> {
    Walk::from_port(fabric, lfts, src, dlid).collect_path()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricBuilder, NodeId, NodeKind};

    /// h0 - s0 = s1 - h1 (two switches, one cable between them).
    fn pair() -> Fabric {
        let mut b = FabricBuilder::new();
        let s0 = b.add_node(NodeKind::Switch, 0x10, "s0", 3);
        let s1 = b.add_node(NodeKind::Switch, 0x20, "s1", 3);
        let h0 = b.add_node(NodeKind::Ca, 0x100, "h0", 1);
        let h1 = b.add_node(NodeKind::Ca, 0x200, "h1", 1);
        b.connect(PortRef::new(s0, 1), PortRef::new(s1, 1)).unwrap();
        b.connect(PortRef::new(h0, 1), PortRef::new(s0, 2)).unwrap();
        b.connect(PortRef::new(h1, 1), PortRef::new(s1, 2)).unwrap();
        b.assign_lids_sequential(0).unwrap(); // s0=1 s1=2 h0=3 h1=4
        b.build().unwrap()
    }

    fn lfts(f: &Fabric, h1_at_s0: u8, h1_at_s1: u8) -> Vec<Lft> {
        let mut lfts = super::super::Routing::empty_lfts(f);
        lfts[0].set(Lid::from_raw(4), PortNum::new(h1_at_s0));
        lfts[1].set(Lid::from_raw(4), PortNum::new(h1_at_s1));
        lfts
    }

    #[test]
    fn delivers_and_reports_each_failure() {
        let f = pair();
        let h0 = PortRef::new(NodeId::new(2), 1);
        let (s0, s1) = (SwitchId::new(0), SwitchId::new(1));
        let p = PortNum::new;
        let h1 = Lid::from_raw(4);
        let ok = trace(&f, &lfts(&f, 1, 2), h0, h1).unwrap();
        assert_eq!(
            ok,
            vec![
                Hop {
                    switch: s0,
                    in_port: p(2),
                    out_port: p(1)
                },
                Hop {
                    switch: s1,
                    in_port: p(1),
                    out_port: p(2)
                }
            ]
        );
        let no_path = PortNum::NO_PATH;
        assert_eq!(
            trace(&f, &lfts(&f, 1, 0xff), h0, h1),
            Err(Undelivered::BlackHole {
                switch: s1,
                port: no_path
            })
        );
        assert_eq!(
            trace(&f, &lfts(&f, 1, 1), h0, h1),
            Err(Undelivered::Loop { switch: s0 })
        );
        assert_eq!(
            trace(&f, &lfts(&f, 2, 2), h0, h1),
            Err(Undelivered::Misdelivered { to: h0 })
        );
        assert_eq!(
            trace(&f, &lfts(&f, 3, 2), h0, h1),
            Err(Undelivered::BlackHole {
                switch: s0,
                port: p(3)
            })
        );
        // Own LID of s1 (LID 2): s0 has no entry.
        assert!(trace(&f, &lfts(&f, 1, 2), h0, Lid::from_raw(2)).is_err());
        // From a switch: enters on port 0.
        let from_s0: Vec<_> = Walk::from_switch(&f, &lfts(&f, 1, 2), s0, h1).collect();
        assert_eq!(from_s0.len(), 2);
        assert_eq!(
            from_s0[0],
            Ok(Hop {
                switch: s0,
                in_port: p(0),
                out_port: p(1)
            })
        );
    }
}
