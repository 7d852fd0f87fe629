//! The tree OpenSM 3.3.23 builds by default (`osm_mcast_mgr.c`), for
//! groups no checked rule covers: the root is the switch with the least
//! maximum hop count to the members' switches (the lowest GUID on ties);
//! from it, every switch forwards towards each member on the first port
//! with the least hops to the member's switch, which with our engines is
//! the port the unicast table gives for that switch's LID (the plugin
//! fills OpenSM's hop tables along the routing). Nothing checks these
//! trees against credit loops; `osmroute check` tells.

use super::tree::attachment;
use super::GroupMft;
use crate::fabric::{Fabric, Peer, PortRef};
use crate::routing::Routing;

pub fn opensm_like(
    fabric: &Fabric,
    routing: &Routing,
    mlid: u16,
    sl: u8,
    members: &[PortRef],
) -> Result<GroupMft, String> {
    let graph = fabric.graph();
    let mut group = GroupMft::new(fabric, mlid, sl);
    let at: Vec<_> = members
        .iter()
        .filter_map(|&m| attachment(fabric, m))
        .collect();
    if at.len() < 2 {
        return Ok(group);
    }
    let root = graph
        .ids()
        .min_by_key(|&s| at.iter().map(|&(m, _)| graph.dist(s, m)).max().unwrap_or(0))
        .ok_or("no switches")?;
    for &(s, port) in &at {
        group.add(s, port);
        let lid = fabric
            .switch_node(s)
            .port(0)
            .map(|p| p.lid)
            .ok_or("a switch without port 0")?;
        let mut here = root;
        let mut hops = 0;
        while here != s {
            let out = routing.lfts[here].get(lid);
            let Some(Peer::Switch { switch, port: far }) = graph.peer(here, out) else {
                return Err(format!(
                    "the unicast table of {} leads off the switches towards {}",
                    fabric.describe_switch(here),
                    fabric.describe_switch(s)
                ));
            };
            group.add(here, out);
            group.add(switch, far);
            here = switch;
            hops += 1;
            if hops > graph.switch_count() {
                return Err("the unicast tables loop".into());
            }
        }
    }
    Ok(group)
}
