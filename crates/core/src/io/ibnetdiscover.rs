//! The topology `ibnetdiscover` prints (infiniband-diags), so `osmroute`
//! can work on the fabric as it is really cabled, with the GUIDs and LIDs
//! the SM gave it, rather than on a net file's idea of it:
//!
//! ```text
//! switchguid=0x200001(200001)
//! Switch 8 "S-0000000000200001"  # "s1" base port 0 lid 5 lmc 0
//! [1] "H-0000000000100000"[2](100002)   # "h0" lid 6 4xSDR
//! [5] "S-0000000000200000"[5]  # "s0" lid 4 4xSDR
//!
//! caguid=0x100000
//! Ca 2 "H-0000000000100000"  # "h0"
//! [1](100001)  "S-0000000000200000"[1]  # lid 2 lmc 1 "s0" lid 4 4xSDR
//! ```
//!
//! Each record is a header (`Switch`, `Ca` or `Rt`, the port count, a name
//! made of a type letter and the node GUID) and a line per cabled port. The
//! comments carry what the names do not: the node description, a switch's
//! LID and LMC (header), a CA port's LID and LMC (its port line). A CA port
//! line also names the port's own GUID in parentheses. Every cable is listed
//! from both ends; the two must agree.
//!
//! (Fields are tab-separated in the real output; any whitespace is read.)
//! Grouped output (`ibnetdiscover -g`) adds `[ext N]` after port numbers,
//! chassis lines and `# Spine Nodes`-style comments; all are read and
//! ignored. ibdiagnet2's `ibdiagnet2.ibnetdiscover` labels ports after
//! their number, `[1](1/1/1)` on a split port or `[65](65)` on the port of
//! an Aggregation Node; a label is told from a CA port's GUID by its
//! slash or by belonging to a switch port (switch ports have no GUID of
//! their own in this format), and is ignored.
//!
//! A byte-order mark, CRLF ends and lines before the first or after the
//! last record (a pasted prompt, a banner) are accepted; those lines are
//! returned as [`Skipped`] for the caller to warn about.

use std::collections::HashMap;

use crate::fabric::{FabricBuilder, FabricError, Lid, NodeId, NodeKind, PortRef};
use crate::io::pasted::{self, Skipped};

/// What is wrong with ibnetdiscover output, with the line it was found on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IbnetdiscoverError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for IbnetdiscoverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for IbnetdiscoverError {}

/// A cable as one end lists it, connected once every node is known.
struct Cable {
    line: usize,
    node: NodeId,
    port: u8,
    peer: String,
    peer_port: u8,
}

/// Reads ibnetdiscover output into nodes (real GUIDs and descriptions),
/// cables and the LIDs the SM had assigned when it ran (ports without a LID
/// keep 0). The builder's subnet LMC is the largest LMC of any CA port,
/// which is what OpenSM's `lmc` option gives them.
pub fn read(text: &str) -> Result<FabricBuilder, IbnetdiscoverError> {
    read_with_notes(text).map(|d| d.builder)
}

/// What was read, and the lines around the topology that were not.
pub struct Discovered {
    pub builder: FabricBuilder,
    pub skipped: Vec<Skipped>,
}

/// Whether a (trimmed) line is one of ibnetdiscover's own: a node header,
/// a port line, an id line or a chassis line of grouped output. Comments
/// are neither in nor out.
pub fn is_record(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let first = words.next().unwrap_or("");
    let numeric_second = words.next().is_some_and(|w| w.parse::<u16>().is_ok());
    let key = first.split_once('=').map(|(k, _)| k);
    // A port line names its peer in quotes, which a shell's job line
    // (`[1] 12345`, `[1]+  Done`) does not.
    (bracketed(line).is_some_and(|(port, _)| port.parse::<u8>().is_ok()) && line.contains('"'))
        || (matches!(first, "Switch" | "Ca" | "Rt") && numeric_second)
        || matches!(
            key,
            Some("vendid" | "devid" | "sysimgguid" | "switchguid" | "caguid" | "rtguid")
        )
        || (first == "Chassis" && numeric_second)
        || first == "Non-Chassis"
        || first == "Hostname:"
}

/// [`read`], returning also the lines outside the topology it skipped.
///
/// One loop over the lines, kept whole (about 115 lines) because the state
/// it carries — the node whose port lines follow, the `switchguid=` that
/// precedes a switch header, the subnet's LMC — is read and written by
/// nearly every kind of line; the per-line parsing itself is in helpers.
pub fn read_with_notes(text: &str) -> Result<Discovered, IbnetdiscoverError> {
    let span = pasted::span(text, is_record);
    let mut b = FabricBuilder::new();
    let mut ids: HashMap<String, NodeId> = HashMap::new();
    let mut cables: Vec<Cable> = Vec::new();
    let mut current: Option<NodeId> = None;
    // `switchguid=0xNODE(PORT)` precedes its switch's header.
    let mut switch_port_guid: Option<u64> = None;
    let mut subnet_lmc = 0u8;
    for (line_no, raw) in span.topology_lines() {
        let line = raw.trim();
        let err = |message: String| IbnetdiscoverError {
            line: line_no,
            message,
        };
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if let Some(guids) = first.strip_prefix("switchguid=") {
            switch_port_guid = guids
                .split_once('(')
                .and_then(|(_, p)| hex(p.trim_end_matches(')')));
            continue;
        }
        // Other id lines (vendid=, devid=, sysimgguid=, caguid=, rtguid=)
        // and the chassis lines of grouped output say nothing we model.
        if first.contains('=')
            || first == "Chassis"
            || first == "Non-Chassis"
            || first == "Hostname:"
        {
            continue;
        }
        if line.starts_with('[') {
            let node = current.ok_or_else(|| err("port line before any node header".into()))?;
            let (port, lid) = port_line(line, b.node(node).is_switch()).map_err(err)?;
            if let Some(guid) = port.guid {
                b.port_mut(PortRef::new(node, port.port))
                    .map_err(|e| err(e.to_string()))?
                    .guid = guid;
            }
            if let Some((lid, lmc)) = lid {
                if !b.node(node).is_switch() {
                    b.set_lid(PortRef::new(node, port.port), Lid::from_raw(lid), lmc)
                        .map_err(|e| err(e.to_string()))?;
                    subnet_lmc = subnet_lmc.max(lmc);
                }
            }
            cables.push(Cable {
                line: line_no,
                node,
                port: port.port,
                peer: port.peer,
                peer_port: port.peer_port,
            });
            continue;
        }
        let header = header(line).map_err(err)?;
        if ids.contains_key(&header.name) {
            return Err(err(format!(
                "node \"{}\" has a second record; each node is listed once",
                header.name
            )));
        }
        let id = b.add_node(header.kind, header.guid, header.desc, header.ports);
        if header.kind == NodeKind::Switch {
            let at = PortRef::new(id, 0);
            if let Some(guid) = switch_port_guid.take() {
                b.port_mut(at).map_err(|e| err(e.to_string()))?.guid = guid;
            }
            if let Some((lid, lmc)) = header.lid {
                b.set_lid(at, Lid::from_raw(lid), lmc)
                    .map_err(|e| err(e.to_string()))?;
            }
        }
        switch_port_guid = None;
        ids.insert(header.name, id);
        current = Some(id);
    }
    for c in cables {
        let err = |message: String| IbnetdiscoverError {
            line: c.line,
            message,
        };
        let &peer = ids.get(&c.peer).ok_or_else(|| {
            err(format!(
                "cable to \"{}\", which has no record of its own; is the output complete?",
                c.peer
            ))
        })?;
        b.connect(PortRef::new(c.node, c.port), PortRef::new(peer, c.peer_port)).map_err(|e| match e {
            FabricError::PortAlreadyLinked { .. } => err(format!(
                "{e}: ibnetdiscover lists every cable from both ends, and here the two ends name different ports"
            )),
            e => err(e.to_string()),
        })?;
    }
    if ids.is_empty() {
        return Err(IbnetdiscoverError {
            line: span.lines.len(),
            message: "no node record (`Switch`, `Ca` or `Rt` header) in the file; is this ibnetdiscover output?".into(),
        });
    }
    b.set_lmc(subnet_lmc);
    Ok(Discovered {
        builder: b,
        skipped: span.skipped,
    })
}

struct Header {
    kind: NodeKind,
    ports: u8,
    name: String,
    guid: u64,
    desc: String,
    /// A switch's own LID and LMC.
    lid: Option<(u16, u8)>,
}

/// `Switch 8 "S-0000000000200001"  # "s1" base port 0 lid 5 lmc 0` or
/// `Ca 2 "H-0000000000100000"  # "h0"`.
fn header(line: &str) -> Result<Header, String> {
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let kind = match word {
        "Switch" => NodeKind::Switch,
        "Ca" | "Rt" => NodeKind::Ca,
        other => {
            return Err(format!(
                "unknown line starting with '{other}' (expected a node header `Switch`, `Ca` or `Rt`, a port line `[n]`, or an id line `key=value`)"
            ))
        }
    };
    let rest = rest.trim_start();
    let (ports, rest) = rest
        .split_once(char::is_whitespace)
        .ok_or("expected a port count and a quoted node name")?;
    let ports: u8 = ports
        .parse()
        .map_err(|_| format!("bad port count '{ports}' (expected 1..=255)"))?;
    let (name, rest) =
        quoted(rest).ok_or("expected a quoted node name like \"S-0002c90000000001\"")?;
    let guid = guid_of_name(&name)?;
    let comment = rest.trim_start().strip_prefix('#').unwrap_or("");
    let (desc, after) = comment_desc(comment);
    let lid = if kind == NodeKind::Switch {
        lid_lmc(after)?
    } else {
        None
    };
    Ok(Header {
        kind,
        ports,
        name,
        guid,
        desc,
        lid,
    })
}

/// The GUID in an ibnetdiscover node name (`S-`, `H-` or `R-` and 16 hex
/// digits): ibnetdiscover names nodes by GUID, so this is the node GUID.
fn guid_of_name(name: &str) -> Result<u64, String> {
    name.get(2..)
        .filter(|_| name.starts_with("S-") || name.starts_with("H-") || name.starts_with("R-"))
        .and_then(hex)
        .ok_or_else(|| format!("node name \"{name}\" is not ibnetdiscover's `S-`/`H-`/`R-` followed by the node GUID in hex"))
}

struct PortLine {
    port: u8,
    /// The port's own GUID (CA port lines).
    guid: Option<u64>,
    peer: String,
    peer_port: u8,
}

/// `[1] "H-..."[2](100002)  # "h0" lid 6 4xSDR` (switch port) or
/// `[1](100001)  "S-..."[1] # lid 2 lmc 1 "s0" lid 4 4xSDR` (CA port);
/// returns the port and, for CA ports, the LID and LMC in the comment.
/// ibdiagnet2's port labels (`[1](1/1/1)`, `[65](65)`) are skipped: on a
/// switch every parenthesis is a label, on a CA one with a slash is.
fn port_line(line: &str, switch: bool) -> Result<(PortLine, Option<(u16, u8)>), String> {
    let (port, rest) = bracketed(line).ok_or("expected `[port]` at the start of the port line")?;
    let port: u8 = port
        .parse()
        .map_err(|_| format!("bad port number '{port}'"))?;
    let mut rest = skip_ext(rest);
    let mut guid = None;
    while let Some((g, after)) = parenthesized(rest) {
        if !switch && !g.contains('/') {
            guid = Some(hex(g).ok_or_else(|| format!("bad port GUID '({g})'"))?);
        }
        rest = after;
    }
    let (peer, rest) =
        quoted(rest).ok_or("expected the quoted name of the node at the other end of the cable")?;
    let (peer_port, rest) =
        bracketed(rest).ok_or("expected `[peer port]` after the peer's name")?;
    let peer_port: u8 = peer_port
        .parse()
        .map_err(|_| format!("bad peer port number '{peer_port}'"))?;
    let mut rest = skip_ext(rest);
    // The peer port's GUID (CA peers) or ibdiagnet2 label: not needed.
    while let Some((_, after)) = parenthesized(rest) {
        rest = after;
    }
    let comment = rest.trim_start().strip_prefix('#').unwrap_or("");
    // A CA port's own LID comes first in its comment, before the peer's
    // quoted description; a switch port's comment only describes the peer.
    let lid = if !switch {
        lid_lmc(comment.split('"').next().unwrap_or(""))?
    } else {
        None
    };
    Ok((
        PortLine {
            port,
            guid,
            peer,
            peer_port,
        },
        lid,
    ))
}

/// The quoted description at the start of a comment and what follows it.
/// Descriptions may contain quotes themselves; in a header the last quote
/// of the line closes it.
fn comment_desc(comment: &str) -> (String, &str) {
    let comment = comment.trim_start();
    match (comment.strip_prefix('"'), comment.rfind('"')) {
        (Some(inner), Some(end)) if end > 0 => (inner[..end - 1].to_string(), &comment[end + 1..]),
        _ => (String::new(), comment),
    }
}

/// `... lid 5 lmc 0 ...` -> (5, 0). No `lid` word means no LID was given;
/// a `lid` without an `lmc` has LMC 0.
fn lid_lmc(text: &str) -> Result<Option<(u16, u8)>, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let value = |key: &str| {
        words
            .iter()
            .position(|w| *w == key)
            .and_then(|i| words.get(i + 1).copied())
    };
    let Some(lid) = value("lid") else {
        return Ok(None);
    };
    let lid: u16 = lid
        .parse()
        .map_err(|_| format!("bad LID '{lid}' in the comment (expected a decimal number)"))?;
    let lmc: u8 = match value("lmc") {
        Some(l) => l
            .parse()
            .ok()
            .filter(|&l| l <= 7)
            .ok_or_else(|| format!("bad LMC '{l}' in the comment (expected 0..=7)"))?,
        None => 0,
    };
    Ok(Some((lid, lmc)))
}

fn hex(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s.strip_prefix("0x").unwrap_or(s);
    if s.is_empty() {
        return None;
    }
    u64::from_str_radix(s, 16).ok()
}

/// Splits `"name" rest` into the name and the rest.
fn quoted(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start().strip_prefix('"')?;
    let (name, rest) = s.split_once('"')?;
    Some((name.to_string(), rest))
}

/// Splits `[text] rest`.
fn bracketed(s: &str) -> Option<(&str, &str)> {
    let (inner, rest) = s.trim_start().strip_prefix('[')?.split_once(']')?;
    Some((inner.trim(), rest))
}

/// Splits `(text) rest`.
fn parenthesized(s: &str) -> Option<(&str, &str)> {
    let (inner, rest) = s.trim_start().strip_prefix('(')?.split_once(')')?;
    Some((inner.trim(), rest))
}

/// Skips the `[ext N]` of grouped output.
fn skip_ext(s: &str) -> &str {
    match bracketed(s) {
        Some((inner, rest)) if inner.starts_with("ext") => rest,
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: usize) -> crate::fabric::NodeId {
        crate::fabric::NodeId::new(i)
    }

    /// `ibnetdiscover` under ibsim on `NET` after OpenSM (3.3.23, `lmc 1`)
    /// brought the subnet up. h0 has two ports, so ibsim numbers h1 from
    /// 0x100003.
    const DISCOVERED: &str = "#
# Topology file: generated on Mon Nov 23 08:56:19 2026
#
# Initiated from node 0000000000100000 port 0000000000100001

vendid=0x0
devid=0x0
sysimgguid=0x200001
switchguid=0x200001(200001)
Switch\t8 \"S-0000000000200001\"\t\t# \"s1\" base port 0 lid 5 lmc 0
[1]\t\"H-0000000000100000\"[2](100002) \t\t# \"h0\" lid 6 4xSDR
[2]\t\"H-0000000000100005\"[1](100006) \t\t# \"h2\" lid 10 4xSDR
[5]\t\"S-0000000000200000\"[5]\t\t# \"s0\" lid 4 4xSDR
[6]\t\"S-0000000000200000\"[6]\t\t# \"s0\" lid 4 4xSDR

vendid=0x0
devid=0x0
sysimgguid=0x200000
switchguid=0x200000(200000)
Switch\t8 \"S-0000000000200000\"\t\t# \"s0\" base port 0 lid 4 lmc 0
[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"h0\" lid 2 4xSDR
[2]\t\"H-0000000000100003\"[1](100004) \t\t# \"h1\" lid 8 4xSDR
[5]\t\"S-0000000000200001\"[5]\t\t# \"s1\" lid 5 4xSDR
[6]\t\"S-0000000000200001\"[6]\t\t# \"s1\" lid 5 4xSDR

vendid=0x0
devid=0x0
sysimgguid=0x100005
caguid=0x100005
Ca\t1 \"H-0000000000100005\"\t\t# \"h2\"
[1](100006) \t\"S-0000000000200001\"[2]\t\t# lid 10 lmc 1 \"s1\" lid 5 4xSDR

vendid=0x0
devid=0x0
sysimgguid=0x100003
caguid=0x100003
Ca\t1 \"H-0000000000100003\"\t\t# \"h1\"
[1](100004) \t\"S-0000000000200000\"[2]\t\t# lid 8 lmc 1 \"s0\" lid 4 4xSDR

vendid=0x0
devid=0x0
sysimgguid=0x100000
caguid=0x100000
Ca\t2 \"H-0000000000100000\"\t\t# \"h0\"
[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 2 lmc 1 \"s0\" lid 4 4xSDR
[2](100002) \t\"S-0000000000200001\"[1]\t\t# lid 6 lmc 1 \"s1\" lid 5 4xSDR
";

    /// The net file ibsim simulated for `DISCOVERED`.
    const NET: &str = "Hca 2 \"h0\"\n[1] \"s0\"[1]\n[2] \"s1\"[1]\n\nHca 1 \"h1\"\n[1] \"s0\"[2]\n\n\
                       Hca 1 \"h2\"\n[1] \"s1\"[2]\n\nSwitch 8 \"s0\"\n[1] \"h0\"[1]\n[2] \"h1\"[1]\n[5] \"s1\"[5]\n\
                       [6] \"s1\"[6]\n\nSwitch 8 \"s1\"\n[1] \"h0\"[2]\n[2] \"h2\"[1]\n[5] \"s0\"[5]\n[6] \"s0\"[6]\n";

    fn by_desc(b: &FabricBuilder, desc: &str) -> NodeId {
        NodeId::new(b.nodes().iter().position(|n| n.desc == desc).unwrap())
    }

    /// Cables by node description and port number, each cable once.
    fn cables(b: &FabricBuilder) -> Vec<(String, u8, String, u8)> {
        let mut c: Vec<_> = b
            .nodes()
            .iter()
            .flat_map(|n| n.links().map(move |(p, r)| (n.desc.clone(), p, r)))
            .map(|(d, p, r)| (d, p.raw(), b.node(r.node).desc.clone(), r.port.raw()))
            .filter(|(a, p, z, q)| (a, p) < (z, q))
            .collect();
        c.sort();
        c
    }

    #[test]
    fn reads_guids_descriptions_and_lids() {
        let b = read(DISCOVERED).unwrap();
        assert_eq!(b.node_count(), 5);
        let (s0, h0, h1) = (by_desc(&b, "s0"), by_desc(&b, "h0"), by_desc(&b, "h1"));
        assert_eq!(b.node(s0).kind, NodeKind::Switch);
        assert_eq!(b.node(s0).guid, 0x20_0000);
        assert_eq!(b.node(s0).port_slots(), 9);
        assert_eq!(b.node(s0).port(0).unwrap().lid, 4);
        assert_eq!(b.node(s0).port(0).unwrap().guid, 0x20_0000);
        assert_eq!(b.node(h1).guid, 0x10_0003);
        assert_eq!(b.node(h1).port(1).unwrap().guid, 0x10_0004);
        let p = b.node(h0).port(2).unwrap();
        assert_eq!((p.guid, p.lid.raw(), p.lmc), (0x10_0002, 6, 1));
        assert_eq!(p.remote, Some(PortRef::new(by_desc(&b, "s1"), 1)));
        let f = b.build().unwrap();
        assert_eq!(f.lmc(), 1);
        assert_eq!(f.max_lid(), 11);
        assert_eq!(f.lid_owner(Lid::from_raw(7)), Some(PortRef::new(h0, 2)));
    }

    #[test]
    fn round_trips_to_the_cables_of_the_simulated_net_file() {
        let discovered = read(DISCOVERED).unwrap();
        let simulated = crate::io::netfile::read(NET).unwrap();
        assert_eq!(cables(&discovered), cables(&simulated));
        assert_eq!(cables(&discovered).len(), 6);
    }

    #[test]
    fn reads_grouped_output_and_quotes_in_descriptions() {
        let text = "Switch\t4 \"S-0000000000000010\"\t\t# \"sw \"a\"\" enhanced port 0 lid 7 lmc 0\n\
                    [1][ext 3]\t\"H-0000000000000020\"[1](21) \t\t# \"h\" lid 8 4xQDR\n\n\
                    Ca\t1 \"H-0000000000000020\"\t\t# \"h\"\n\
                    [1](21) \t\"S-0000000000000010\"[1][ext 3]\t\t# lid 8 lmc 0 \"sw\" lid 7 4xQDR\n";
        let b = read(text).unwrap();
        assert_eq!(b.node(n(0)).desc, "sw \"a\"");
        assert_eq!(b.node(n(0)).port(0).unwrap().lid, 7);
        assert_eq!(b.node(n(1)).port(1).unwrap().lid, 8);
        assert_eq!(
            b.node(n(1)).port(1).unwrap().remote,
            Some(PortRef::new(n(0), 1))
        );
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let e = read("Switch 4 \"S-0000000000000010\"\n[1] \"H-0000000000000020\"[1](21)\n")
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("no record of its own"), "{e}");
        let e = read("Switch 4 \"sw0\"\n").unwrap_err();
        assert_eq!(e.to_string(), "line 1: node name \"sw0\" is not ibnetdiscover's `S-`/`H-`/`R-` followed by the node GUID in hex");
        let e = read("[1] \"S-0000000000000010\"[1]\n").unwrap_err();
        assert_eq!(e.to_string(), "line 1: port line before any node header");
        let e =
            read("Switch 4 \"S-0000000000000010\" # \"s\" base port 0 lid x lmc 0\n").unwrap_err();
        assert!(e.message.contains("bad LID 'x'"), "{e}");
        // Between records; alone it would be a pasted line around nothing.
        let e = read("Switch 4 \"S-0000000000000010\"\nRouter 4 \"R-0000000000000011\"\n[1] \"S-0000000000000010\"[2]\n")
            .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("expected a node header"), "{e}");
        let e = read("Router 4 \"R-0000000000000010\"\n").unwrap_err();
        assert!(e.message.contains("no node record"), "{e}");
        let e =
            read("Switch 4 \"S-0000000000000010\"\n[9] \"S-0000000000000010\"[1]\n").unwrap_err();
        assert!(e.message.contains("has no port 9"), "{e}");
    }

    #[test]
    fn cable_ends_must_agree() {
        let text = "Switch 4 \"S-0000000000000010\"\n[1] \"S-0000000000000011\"[1]\n\n\
                    Switch 4 \"S-0000000000000011\"\n[1] \"S-0000000000000010\"[2]\n";
        let e = read(text).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.message.contains("cabled twice"), "{e}");
    }
}

#[cfg(test)]
mod pasted_tests {
    use super::*;

    /// Topology with what a terminal adds: BOM, CRLF, prompt and banner.
    const PASTED: &str = "\u{feff}[root@mgmt ~]# ibnetdiscover\r\n\
#\r\n# Topology file: generated on Mon Nov 23 08:56:19 2026\r\n#\r\n\
switchguid=0x10(10)\r\n\
Switch\t4 \"S-0000000000000010\"\t\t# \"sw\" enhanced port 0 lid 7 lmc 0\r\n\
[1]\t\"H-0000000000000020\"[1](21) \t\t# \"h\" lid 8 4xQDR\r\n\r\n\
Ca\t1 \"H-0000000000000020\"\t\t# \"h\"\r\n\
[1](21) \t\"S-0000000000000010\"[1]\t\t# lid 8 lmc 0 \"sw\" lid 7 4xQDR\r\n\
[root@mgmt ~]# \r\n";

    #[test]
    fn bom_crlf_prompts_and_banners_are_skipped_with_their_lines() {
        let d = read_with_notes(PASTED).unwrap();
        assert_eq!(d.builder.node_count(), 2);
        let skipped: Vec<_> = d
            .skipped
            .iter()
            .map(|s| (s.line, s.text.as_str()))
            .collect();
        assert_eq!(
            skipped,
            [(1, "[root@mgmt ~]# ibnetdiscover"), (11, "[root@mgmt ~]#")]
        );
        d.builder.build().unwrap();
    }

    #[test]
    fn a_strange_line_between_records_is_still_an_error() {
        // A shell's job line before the topology is skipped too.
        let d = read_with_notes(&format!("[1] 12345\n{PASTED}")).unwrap();
        assert_eq!(d.skipped[0].text, "[1] 12345");
        let text = PASTED.replace("\r\n\r\nCa", "\r\ngarbage here\r\nCa");
        let e = read(&text).err().unwrap();
        assert_eq!(e.line, 8);
        assert!(
            e.message.contains("unknown line starting with 'garbage'"),
            "{e}"
        );
    }

    #[test]
    fn ibdiagnet2_port_labels_and_aggregation_node_ports_are_read() {
        // ibdiagnet2 labels switch ports `[n](a/b/c)` (split ports) and
        // the port of an Aggregation Node `[65](65)`.
        let text = "Switch\t65 \"S-0000000000000010\"\t\t# \"sw\" enhanced port 0 lid 7 lmc 0\n\
                    [1](1/1/1)\t\"H-0000000000000020\"[1](21) \t\t# \"h\" lid 8 4xHDR\n\
                    [65](65)\t\"H-0000000000000030\"[1](31) \t\t# \"Mellanox Technologies Aggregation Node\" lid 9 4xHDR\n\n\
                    Ca\t1 \"H-0000000000000020\"\t\t# \"h\"\n\
                    [1](21) \t\"S-0000000000000010\"[1](1/1/1)\t\t# lid 8 lmc 0 \"sw\" lid 7 4xHDR\n\n\
                    Ca\t1 \"H-0000000000000030\"\t\t# \"Mellanox Technologies Aggregation Node\"\n\
                    [1](31) \t\"S-0000000000000010\"[65](65)\t\t# lid 9 lmc 0 \"sw\" lid 7 4xHDR\n";
        let b = read(text).unwrap();
        let an = NodeId::new(2);
        assert_eq!(b.node(an).port(1).unwrap().guid, 0x31);
        assert_eq!(b.node(an).port(1).unwrap().lid.raw(), 9);
        assert_eq!(
            b.node(an).port(1).unwrap().remote,
            Some(PortRef::new(NodeId::new(0), 65))
        );
        assert_eq!(b.build().unwrap().cas().count(), 2);
    }

    #[test]
    fn grouped_output_chassis_and_group_comments_are_read() {
        let text = "#\n# Topology file\n#\n\nChassis 1 (guid 0x8f104004128ca)\n\n# Spine Nodes\n\
                    sysimgguid=0x10\t\t# Chassis 1 (ISR9288) slot 1\n\
                    switchguid=0x10(10)\n\
                    Switch\t4 \"S-0000000000000010\"\t\t# \"sw\" enhanced port 0 lid 7 lmc 0\n\
                    [1][ext 3]\t\"H-0000000000000020\"[1](21) \t\t# \"h\" lid 8 4xQDR\n\n\
                    Non-Chassis Nodes\n\n\
                    Ca\t1 \"H-0000000000000020\"\t\t# \"h\"\n\
                    [1](21) \t\"S-0000000000000010\"[1][ext 3]\t\t# lid 8 lmc 0 \"sw\" lid 7 4xQDR\n";
        let d = read_with_notes(text).unwrap();
        assert!(d.skipped.is_empty(), "{:?}", d.skipped);
        assert_eq!(d.builder.build().unwrap().switch_count(), 1);
    }

    #[test]
    fn a_file_with_no_record_says_so() {
        let e = read("hello\nworld\n").err().unwrap();
        assert!(e.message.contains("no node record"), "{e}");
    }
}
