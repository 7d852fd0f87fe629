//! ibsim net files (the format of /usr/share/doc/ibsim-utils/net-examples,
//! an ibnetdiscover-like text): one record per node,
//!
//! ```text
//! Switch 7 "sw-g0-s0"
//! [1] "h-g0-s0-p0"[1]
//! [3] "sw-g0-s1"[2]
//! ```
//!
//! a header (`Switch` or `Hca`, the port count, a unique quoted name) and a
//! line per cabled port (`[port] "peer"[peer port]`), records separated by
//! blank lines. ibsim assigns GUIDs itself (switches from 0x200000, HCAs
//! from 0x100000, in file order) and uses the name as node description; the
//! SM attaches to the first port of the first node, so writers put an HCA
//! first.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::fabric::{FabricBuilder, NodeId, NodeKind, PortRef};

/// Writes the nodes and cables of `fabric` (LIDs are not part of the
/// format). CAs come first so that ibsim attaches the SM to a host.
pub fn write(fabric: &FabricBuilder) -> String {
    let nodes = fabric.nodes();
    let mut taken = std::collections::HashSet::new();
    let names: Vec<String> = nodes
        .iter()
        .enumerate()
        .map(|(id, n)| node_name(id, &n.desc, &mut taken))
        .collect();
    let order = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.kind == NodeKind::Ca)
        .chain(
            nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| n.kind == NodeKind::Switch),
        )
        .map(|(id, n)| (NodeId::new(id), n));
    let mut out = String::new();
    for (id, node) in order {
        let kind = if node.kind == NodeKind::Switch {
            "Switch"
        } else {
            "Hca"
        };
        let _ = writeln!(out, "{kind} {} \"{}\"", node.port_slots() - 1, names[id]);
        for (port, remote) in node.links() {
            if !port.is_management() {
                let _ = writeln!(out, "[{port}] \"{}\"[{}]", names[remote.node], remote.port);
            }
        }
        out.push('\n');
    }
    out
}

/// A name ibsim (and `read`) accepts, unique in the file: the description
/// when it is usable, else one made from the node's position. Real
/// fabrics repeat descriptions (every host's "mlx5_0"), and a `#` would
/// start a comment, a quote end the name, a control character break the
/// line.
fn node_name(id: usize, desc: &str, taken: &mut std::collections::HashSet<String>) -> String {
    let usable = !desc.trim().is_empty()
        && !desc.contains(['"', '#'])
        && !desc.chars().any(char::is_control);
    let mut name = if usable {
        desc.to_string()
    } else {
        format!("node-{id}")
    };
    let mut n = 1;
    while !taken.insert(name.clone()) {
        name = format!("node-{id}-{n}");
        n += 1;
    }
    name
}

/// What is wrong with a net file, with the line it was found on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetFileError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for NetFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for NetFileError {}

/// Reads a net file into nodes and cables. Node GUIDs follow ibsim's
/// numbering (switches 0x200000 + n; HCAs from 0x100000 one after another,
/// each taking its node GUID and then one per port, so 0x100000 + 2n for
/// single-port HCAs), so offline runs name nodes as a simulation does.
pub fn read(text: &str) -> Result<FabricBuilder, NetFileError> {
    let mut b = FabricBuilder::new();
    let mut ids: HashMap<String, NodeId> = HashMap::new();
    // Cables as written: (line, node, port, peer name, peer port).
    let mut cables: Vec<(usize, NodeId, u8, String, u8)> = Vec::new();
    let (mut switches, mut next_hca_guid) = (0u64, 0x10_0000u64);
    let mut current: Option<NodeId> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let err = |message: String| NetFileError {
            line: line_no,
            message,
        };
        if let Some(rest) = line.strip_prefix('[') {
            let node = current.ok_or_else(|| err("port line before any node header".into()))?;
            let (port, rest) = rest
                .split_once(']')
                .ok_or_else(|| err("expected `[port]`".into()))?;
            let port: u8 = port
                .trim()
                .parse()
                .map_err(|_| err(format!("bad port number '{port}'")))?;
            let (peer, rest) =
                quoted(rest).ok_or_else(|| err("expected a quoted peer name".into()))?;
            let peer_port = rest
                .trim_start()
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .and_then(|(p, _)| p.trim().parse::<u8>().ok())
                .ok_or_else(|| err("expected `[peer port]` after the peer name".into()))?;
            cables.push((line_no, node, port, peer, peer_port));
            continue;
        }
        let (kind_word, rest) = line
            .split_once(char::is_whitespace)
            .ok_or_else(|| err("expected a node header".into()))?;
        let kind = match kind_word {
            "Switch" => NodeKind::Switch,
            "Hca" | "Ca" | "Rtr" => NodeKind::Ca,
            other => {
                return Err(err(format!(
                    "unknown node type '{other}' (expected Switch or Hca)"
                )))
            }
        };
        let rest = rest.trim_start();
        let (ports, rest) = rest
            .split_once(char::is_whitespace)
            .ok_or_else(|| err("expected a port count".into()))?;
        let ports: u8 = ports
            .parse()
            .map_err(|_| err(format!("bad port count '{ports}'")))?;
        let (name, _) = quoted(rest).ok_or_else(|| err("expected a quoted node name".into()))?;
        let guid = if kind == NodeKind::Switch {
            switches += 1;
            0x20_0000 + switches - 1
        } else {
            let guid = next_hca_guid;
            next_hca_guid += 1 + u64::from(ports);
            guid
        };
        let id = b.add_node(kind, guid, name.clone(), ports);
        if ids.insert(name.clone(), id).is_some() {
            return Err(err(format!("node name \"{name}\" is used twice")));
        }
        current = Some(id);
    }
    for (line, node, port, peer, peer_port) in cables {
        let err = |message: String| NetFileError { line, message };
        let &peer_id = ids
            .get(&peer)
            .ok_or_else(|| err(format!("cable to unknown node \"{peer}\"")))?;
        b.connect(PortRef::new(node, port), PortRef::new(peer_id, peer_port))
            .map_err(|e| err(e.to_string()))?;
    }
    Ok(b)
}

/// Splits `"name" rest` into the name and the rest.
fn quoted(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start().strip_prefix('"')?;
    let (name, rest) = s.split_once('"')?;
    Some((name.to_string(), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: usize) -> crate::fabric::NodeId {
        crate::fabric::NodeId::new(i)
    }

    #[test]
    fn reads_the_ibsim_example_format() {
        let text = "# comment\nSwitch\t8 \"Switch1\"\n[1]\t\"Hca1\"[1]\n[3]\t\"Switch2\"[3]\n\n\
                    Switch 8 \"Switch2\"\n[3]\t\"Switch1\"[3]\n\nHca\t2 \"Hca1\"\n[1]\t\"Switch1\"[1]\n";
        let b = read(text).unwrap();
        assert_eq!(b.node_count(), 3);
        assert_eq!(
            b.node(n(0)).port(3).unwrap().remote,
            Some(PortRef::new(n(1), 3))
        );
        assert_eq!(b.node(n(2)).guid, 0x10_0000);
        // ibsim numbers an HCA's ports after its node GUID, so a 2-port HCA
        // moves the next one on by 3 (checked against ibsim's guid2lid).
        let two = read("Hca 2 \"a\"\n\nHca 1 \"b\"\n").unwrap();
        assert_eq!(
            (two.node(n(0)).guid, two.node(n(1)).guid),
            (0x10_0000, 0x10_0003)
        );
        assert_eq!(b.node(n(1)).guid, 0x20_0001);
    }

    #[test]
    fn write_then_read_gives_the_same_cables() {
        let text = "Switch 4 \"s0\"\n[1] \"h0\"[1]\n[2] \"s1\"[4]\n\nSwitch 4 \"s1\"\n[4] \"s0\"[2]\n\nHca 1 \"h0\"\n[1] \"s0\"[1]\n";
        let b = read(text).unwrap();
        let again = read(&write(&b)).unwrap();
        let cables = |b: &FabricBuilder| {
            let mut c: Vec<(String, u8, String, u8)> = b
                .nodes()
                .iter()
                .flat_map(|n| n.links().map(move |(p, r)| (n.desc.clone(), p, r)))
                .map(|(d, p, r)| (d, p.raw(), b.node(r.node).desc.clone(), r.port.raw()))
                .collect();
            c.sort();
            c
        };
        assert_eq!(cables(&b), cables(&again));
        assert!(
            write(&b).starts_with("Hca 1 \"h0\""),
            "a host first, for the SM"
        );
    }

    /// Found by tests/fuzz_readers.rs: descriptions from OpenSM's subnet
    /// list or ibnetdiscover output with a `#`, or repeated, made net files
    /// that did not read back.
    #[test]
    fn odd_or_repeated_descriptions_still_round_trip() {
        let mut b = FabricBuilder::new();
        let s = b.add_node(NodeKind::Switch, 0x10, "#sw", 4);
        let h0 = b.add_node(NodeKind::Ca, 0x20, "host mlx5_0", 1);
        let h1 = b.add_node(NodeKind::Ca, 0x30, "host mlx5_0", 1);
        let h2 = b.add_node(NodeKind::Ca, 0x40, "node-2", 1);
        let h3 = b.add_node(NodeKind::Ca, 0x50, "line\nbreak", 1);
        for (i, h) in [h0, h1, h2, h3].into_iter().enumerate() {
            b.connect(PortRef::new(h, 1), PortRef::new(s, i as u8 + 1))
                .unwrap();
        }
        let again = read(&write(&b)).unwrap();
        assert_eq!(again.node_count(), 5);
        assert_eq!(
            again
                .nodes()
                .iter()
                .map(|n| n.links().count())
                .sum::<usize>(),
            8
        );
        assert!(again.nodes().iter().any(|n| n.desc == "host mlx5_0"));
    }

    #[test]
    fn errors_name_the_line() {
        let e = read("Switch 4 \"s0\"\n[1] \"nowhere\"[1]\n").unwrap_err();
        assert_eq!(e.to_string(), "line 2: cable to unknown node \"nowhere\"");
        let e = read("Router 4 \"r\"\n").unwrap_err();
        assert_eq!(e.line, 1);
    }
}
