//! Following the forwarding tables hop by hop.

use std::fmt;

use crate::fabric::{Fabric, PortRef};
use crate::routing::{Routing, NO_PATH};

/// Why a packet does not arrive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Undelivered {
    /// The source port is not cabled to a switch.
    NotCabled,
    /// A switch has no entry for the LID (or points at an uncabled port).
    BlackHole { switch: usize, port: u8 },
    /// The packet comes back to a switch it passed.
    Loop { switch: usize },
    /// Delivered to a port that does not own the LID.
    Misdelivered { to: PortRef },
}

impl fmt::Display for Undelivered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undelivered::NotCabled => write!(f, "source port is not cabled to a switch"),
            Undelivered::BlackHole { switch, port } => write!(f, "black hole at switch index {switch} (port {port})"),
            Undelivered::Loop { switch } => write!(f, "forwarding loop through switch index {switch}"),
            Undelivered::Misdelivered { to } => write!(f, "delivered to node {} port {}", to.node, to.port),
        }
    }
}

/// One hop of a path: the switch (index) and the port it forwards on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub switch: usize,
    pub in_port: u8,
    pub out_port: u8,
}

/// The switches a packet from CA port `src` to `dlid` passes, with in- and
/// out-ports (out-port 0 at the last switch when the LID is the switch's own).
pub fn trace(fabric: &Fabric, routing: &Routing, src: PortRef, dlid: u16) -> Result<Vec<Hop>, Undelivered> {
    let mut at = fabric.port(src).and_then(|p| p.remote).ok_or(Undelivered::NotCabled)?;
    let mut hops: Vec<Hop> = Vec::with_capacity(8);
    loop {
        let switch = fabric.switch_index(at.node).ok_or(Undelivered::NotCabled)?;
        if hops.iter().any(|h| h.switch == switch) {
            return Err(Undelivered::Loop { switch });
        }
        let out = routing.lfts.get(switch).and_then(|t| t.get(dlid as usize)).copied().unwrap_or(NO_PATH);
        hops.push(Hop { switch, in_port: at.port, out_port: out });
        if out == NO_PATH {
            return Err(Undelivered::BlackHole { switch, port: out });
        }
        if out == 0 {
            let here = PortRef::new(at.node, 0);
            return if fabric.lid_owner(dlid) == Some(here) { Ok(hops) } else { Err(Undelivered::Misdelivered { to: here }) };
        }
        let next = fabric.port(PortRef::new(at.node, out)).and_then(|p| p.remote).ok_or(Undelivered::BlackHole { switch, port: out })?;
        if !fabric.node(next.node).is_switch() {
            return if fabric.lid_owner(dlid) == Some(next) { Ok(hops) } else { Err(Undelivered::Misdelivered { to: next }) };
        }
        at = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::{FabricBuilder, NodeKind};
    use crate::routing::PathSl;

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

    fn routing(f: &Fabric, h1_at_s0: u8, h1_at_s1: u8) -> Routing {
        let mut lfts = Routing::empty_lfts(f);
        lfts[0][4] = h1_at_s0;
        lfts[1][4] = h1_at_s1;
        Routing { engine: "t".into(), lfts, sl2vl: None, path_sl: PathSl::Uniform(0) }
    }

    #[test]
    fn delivers_and_reports_each_failure() {
        let f = pair();
        let h0 = PortRef::new(2, 1);
        let ok = trace(&f, &routing(&f, 1, 2), h0, 4).unwrap();
        assert_eq!(ok, vec![Hop { switch: 0, in_port: 2, out_port: 1 }, Hop { switch: 1, in_port: 1, out_port: 2 }]);
        assert_eq!(trace(&f, &routing(&f, 1, NO_PATH), h0, 4), Err(Undelivered::BlackHole { switch: 1, port: NO_PATH }));
        assert_eq!(trace(&f, &routing(&f, 1, 1), h0, 4), Err(Undelivered::Loop { switch: 0 }));
        assert_eq!(trace(&f, &routing(&f, 2, 2), h0, 4), Err(Undelivered::Misdelivered { to: h0 }));
        assert_eq!(trace(&f, &routing(&f, 3, 2), h0, 4), Err(Undelivered::BlackHole { switch: 0, port: 3 }));
        // Own LID of s1 (LID 2): s0 has no entry.
        assert!(trace(&f, &routing(&f, 1, 2), h0, 2).is_err());
    }
}
