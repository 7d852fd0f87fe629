//! The ports report, `ibnetdiscover -p` (`--ports`): one line per port of
//! every discovered node, the form hwloc's netloc and many site scripts
//! keep. A cabled port names both ends, an uncabled one only itself:
//!
//! ```text
//! CA   139  1 0x0002c903004e26b1 4x QDR - SW   142 36 0x0008f10500108c9e ( 'node1 HCA-1' - 'Voltaire 4036' )
//! SW   142 36 0x0008f10500108c9e 4x QDR - CA   139  1 0x0002c903004e26b1 ( 'Voltaire 4036' - 'node1 HCA-1' )
//! SW   142 35 0x0008f10500108c9e 4x ???                                    'Voltaire 4036'
//! ```
//!
//! Each end is: node type (`SW`, `CA`, `RT`), LID (a switch's own LID, a
//! CA port's base LID), port number and port GUID; then width and speed
//! (read past). The report has no node GUIDs and no port counts:
//!
//! - a switch is known by its port GUID, which all its ports share;
//! - a CA's ports each have their own GUID, and ibnetdiscover prints a
//!   node's ports together from the highest down, so consecutive CA lines
//!   with the same description and falling port numbers are one adapter
//!   (its node GUID is taken as the first port's GUID less the port
//!   number, the usual numbering);
//! - a node has as many ports as the highest port number seen on it.
//!
//! Discovery trace lines (`DR path slid ...`, printed with `-v` and often
//! saved in the same file) are skipped wherever they are; the caller is
//! told how many.

use std::collections::HashMap;

use crate::fabric::{FabricBuilder, FabricError, Lid, NodeKind, PortRef};
use crate::io::ibnetdiscover::{Discovered, IbnetdiscoverError};
use crate::io::pasted::{self, Skipped};

/// One end of a cable as the report prints it.
#[derive(Clone, Copy, Debug)]
struct End {
    kind: NodeKind,
    lid: u16,
    port: u8,
    guid: u64,
}

struct ReportLine {
    line: usize,
    local: End,
    remote: Option<End>,
    name: String,
    remote_name: String,
}

/// Whether a (trimmed) line is a ports-report line: type, LID, port, GUID.
pub fn is_record(line: &str) -> bool {
    let w: Vec<&str> = line.split_whitespace().take(4).collect();
    w.len() == 4
        && matches!(w[0], "SW" | "CA" | "RT")
        && w[1].parse::<u16>().is_ok()
        && w[2].parse::<u8>().is_ok()
        && w[3].starts_with("0x")
}

/// ibnetdiscover's `-v` discovery trace.
fn is_trace(line: &str) -> bool {
    line.starts_with("DR path ")
}

/// Reads a ports report into nodes, cables and LIDs (LMC 0: the report
/// does not give it).
pub fn read(text: &str) -> Result<Discovered, IbnetdiscoverError> {
    let mut span = pasted::span(text, is_record);
    let traces: Vec<usize> = (0..span.lines.len())
        .filter(|&i| is_trace(span.lines[i].trim()))
        .collect();
    span.skipped.retain(|s| !is_trace(&s.text));
    let mut lines = Vec::new();
    for (line_no, raw) in span.topology_lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || is_trace(line) {
            continue;
        }
        let mut parsed = report_line(line).map_err(|message| IbnetdiscoverError {
            line: line_no,
            message,
        })?;
        parsed.line = line_no;
        lines.push(parsed);
    }
    if lines.is_empty() {
        return Err(IbnetdiscoverError {
            line: span.lines.len(),
            message: "no port line (`SW|CA|RT lid port 0xguid ...`) in the file; is this `ibnetdiscover -p` output?".into(),
        });
    }
    let mut skipped = span.skipped;
    if let (Some(&a), Some(&z)) = (traces.first(), traces.last()) {
        skipped.push(Skipped {
            line: a + 1,
            text: format!(
                "{} discovery trace lines (`DR path ...`, ibnetdiscover -v) between lines {} and {}",
                traces.len(),
                a + 1,
                z + 1
            ),
        });
        skipped.sort_by_key(|s| s.line);
    }
    Ok(Discovered {
        builder: build(&lines)?,
        skipped,
    })
}

/// A node as the report reveals it.
struct Proto {
    kind: NodeKind,
    guid: u64,
    desc: String,
    /// A switch's LID (its port 0).
    lid: u16,
    /// Highest port seen.
    ports: u8,
    /// A CA's ports: (port, GUID, base LID).
    ca_ports: Vec<(u8, u64, u16)>,
}

/// Nodes: switches by GUID, CA ports by port GUID, both to an index.
#[derive(Default)]
struct Nodes {
    protos: Vec<Proto>,
    switches: HashMap<u64, usize>,
    ca_ports: HashMap<u64, usize>,
}

impl Nodes {
    /// The node of `end`, created with `desc` when unknown. `adapter` is
    /// the CA whose ports the previous lines listed, which `end` joins when
    /// its port number is lower and the description the same.
    fn node_of(&mut self, end: End, desc: &str, adapter: Option<usize>) -> usize {
        let known = match end.kind {
            NodeKind::Switch => self.switches.get(&end.guid),
            NodeKind::Ca => self.ca_ports.get(&end.guid),
        };
        let id = match known {
            Some(&id) => id,
            None => {
                let joins = adapter.filter(|&a| {
                    let p = &self.protos[a];
                    end.kind == NodeKind::Ca
                        && p.desc == desc
                        && p.ca_ports.last().is_some_and(|&(q, _, _)| end.port < q)
                });
                joins.unwrap_or_else(|| {
                    self.protos.push(Proto {
                        kind: end.kind,
                        guid: match end.kind {
                            NodeKind::Switch => end.guid,
                            NodeKind::Ca => end.guid.wrapping_sub(u64::from(end.port)),
                        },
                        desc: desc.to_string(),
                        lid: 0,
                        ports: 0,
                        ca_ports: Vec::new(),
                    });
                    self.protos.len() - 1
                })
            }
        };
        let p = &mut self.protos[id];
        p.ports = p.ports.max(end.port);
        match end.kind {
            NodeKind::Switch => {
                self.switches.insert(end.guid, id);
                p.lid = end.lid;
            }
            NodeKind::Ca => {
                if self.ca_ports.insert(end.guid, id).is_none() {
                    p.ca_ports.push((end.port, end.guid, end.lid));
                }
            }
        }
        id
    }
}

fn build(lines: &[ReportLine]) -> Result<FabricBuilder, IbnetdiscoverError> {
    let mut nodes = Nodes::default();
    // First every node's own lines, so CA ports group into adapters; then
    // the far ends, which are mostly known by then.
    let mut adapter = None;
    let locals: Vec<usize> = lines
        .iter()
        .map(|l| {
            let id = nodes.node_of(l.local, &l.name, adapter);
            adapter = (l.local.kind == NodeKind::Ca).then_some(id);
            id
        })
        .collect();
    let remotes: Vec<Option<usize>> = lines
        .iter()
        .map(|l| l.remote.map(|r| nodes.node_of(r, &l.remote_name, None)))
        .collect();
    let mut b = FabricBuilder::new();
    for p in &nodes.protos {
        b.add_node(p.kind, p.guid, p.desc.clone(), p.ports);
    }
    let err = |line: usize, e: FabricError| IbnetdiscoverError {
        line,
        message: e.to_string(),
    };
    let first_line = lines.first().map_or(0, |l| l.line);
    for (id, p) in nodes.protos.iter().enumerate() {
        let node = crate::fabric::NodeId::new(id);
        if p.kind == NodeKind::Switch && p.lid != 0 {
            b.set_lid(PortRef::new(node, 0), Lid::from_raw(p.lid), 0)
                .map_err(|e| err(first_line, e))?;
        }
        for &(port, guid, lid) in &p.ca_ports {
            let at = PortRef::new(node, port);
            b.port_mut(at).map_err(|e| err(first_line, e))?.guid = guid;
            if lid != 0 {
                b.set_lid(at, Lid::from_raw(lid), 0)
                    .map_err(|e| err(first_line, e))?;
            }
        }
    }
    for ((l, &a), &z) in lines.iter().zip(&locals).zip(&remotes) {
        let (Some(r), Some(z)) = (l.remote, z) else {
            continue;
        };
        let here = PortRef::new(crate::fabric::NodeId::new(a), l.local.port);
        let there = PortRef::new(crate::fabric::NodeId::new(z), r.port);
        b.connect(here, there).map_err(|e| match e {
            FabricError::PortAlreadyLinked { .. } => IbnetdiscoverError {
                line: l.line,
                message: format!("{e}: the report lists every cable from both ends, and here the two ends name different ports"),
            },
            e => err(l.line, e),
        })?;
    }
    Ok(b)
}

/// `TYPE LID PORT 0xGUID WIDTH SPEED` then `- TYPE LID PORT 0xGUID ( 'a' -
/// 'b' )` or `'a'`; the line number is the caller's to fill in.
fn report_line(line: &str) -> Result<ReportLine, String> {
    let (w, rest) = words(line, 6)
        .ok_or("expected `TYPE LID PORT 0xGUID WIDTH SPEED` (an `ibnetdiscover -p` port line)")?;
    let local = end(&w[..4])?;
    let rest = rest.trim_start();
    if let Some(rest) = rest.strip_prefix('-') {
        let (w, rest) =
            words(rest, 4).ok_or("expected the far end `TYPE LID PORT 0xGUID` after `-`")?;
        let remote = end(&w)?;
        let names = rest
            .trim()
            .strip_prefix('(')
            .and_then(|r| r.trim_end().strip_suffix(')'))
            .map(str::trim)
            .and_then(|r| r.strip_prefix('\'')?.strip_suffix('\''))
            .and_then(|r| r.split_once("' - '"))
            .ok_or("expected `( 'this node' - 'far node' )` after the far end")?;
        Ok(ReportLine {
            line: 0,
            local,
            remote: Some(remote),
            name: names.0.to_string(),
            remote_name: names.1.to_string(),
        })
    } else {
        let name = rest
            .trim_end()
            .strip_prefix('\'')
            .and_then(|r| r.strip_suffix('\''))
            .ok_or("expected `- TYPE LID PORT 0xGUID ( ... )` or the quoted node description")?;
        Ok(ReportLine {
            line: 0,
            local,
            remote: None,
            name: name.to_string(),
            remote_name: String::new(),
        })
    }
}

/// One end: `TYPE LID PORT 0xGUID`.
fn end(w: &[&str]) -> Result<End, String> {
    let kind = match w[0] {
        "SW" => NodeKind::Switch,
        "CA" | "RT" => NodeKind::Ca,
        other => {
            return Err(format!(
                "unknown node type '{other}' (expected SW, CA or RT)"
            ))
        }
    };
    let lid = w[1]
        .parse()
        .map_err(|_| format!("bad LID '{}' (expected 0..=65535)", w[1]))?;
    let port = w[2]
        .parse()
        .map_err(|_| format!("bad port number '{}' (expected 0..=255)", w[2]))?;
    let guid = w[3]
        .strip_prefix("0x")
        .and_then(|g| u64::from_str_radix(g, 16).ok())
        .ok_or_else(|| format!("bad GUID '{}' (expected 0x and hex digits)", w[3]))?;
    Ok(End {
        kind,
        lid,
        port,
        guid,
    })
}

/// The first `n` whitespace-separated words and the rest of the line.
fn words(s: &str, n: usize) -> Option<(Vec<&str>, &str)> {
    let mut rest = s;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = rest.trim_start();
        let end = t.find(char::is_whitespace).unwrap_or(t.len());
        if end == 0 {
            return None;
        }
        out.push(&t[..end]);
        rest = &t[end..];
    }
    Some((out, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::NodeId;

    /// Two switches (LIDs 4, 5) with two cables between them, a dual-port
    /// adapter h0 cabled to both, h1 on s0; an uncabled port; discovery
    /// trace and a prompt around it, CRLF ends.
    const REPORT: &str = "user@head:~$ ibnetdiscover -v -p\r\n\
DR path slid 0; dlid 0; 0 -> new Channel Adapter {0000000000100000} portnum 1 lid 0-0 \"\"\r\n\
CA     6  2 0x0000000000100002 4x QDR - SW     5  1 0x0000000000200001 ( 'h0 HCA-1' - 's1' )\r\n\
CA     2  1 0x0000000000100001 4x QDR - SW     4  1 0x0000000000200000 ( 'h0 HCA-1' - 's0' )\r\n\
CA     8  1 0x0000000000100004 4x QDR - SW     4  2 0x0000000000200000 ( 'h1 HCA-1' - 's0' )\r\n\
SW     4  1 0x0000000000200000 4x QDR - CA     2  1 0x0000000000100001 ( 's0' - 'h0 HCA-1' )\r\n\
SW     4  2 0x0000000000200000 4x QDR - CA     8  1 0x0000000000100004 ( 's0' - 'h1 HCA-1' )\r\n\
SW     4  5 0x0000000000200000 4x QDR - SW     5  5 0x0000000000200001 ( 's0' - 's1' )\r\n\
SW     4  6 0x0000000000200000 4x QDR - SW     5  6 0x0000000000200001 ( 's0' - 's1' )\r\n\
SW     4  8 0x0000000000200000 4x ???                                    's0'\r\n\
SW     5  1 0x0000000000200001 4x QDR - CA     6  2 0x0000000000100002 ( 's1' - 'h0 HCA-1' )\r\n\
SW     5  5 0x0000000000200001 4x QDR - SW     4  5 0x0000000000200000 ( 's1' - 's0' )\r\n\
SW     5  6 0x0000000000200001 4x QDR - SW     4  6 0x0000000000200000 ( 's1' - 's0' )\r\n\
user@head:~$\r\n";

    fn by_desc(b: &FabricBuilder, desc: &str) -> NodeId {
        NodeId::new(b.nodes().iter().position(|n| n.desc == desc).unwrap())
    }

    #[test]
    fn reads_nodes_cables_and_lids() {
        let d = read(REPORT).unwrap();
        let b = &d.builder;
        assert_eq!(b.node_count(), 4, "two switches, two adapters");
        let (s0, s1, h0) = (by_desc(b, "s0"), by_desc(b, "s1"), by_desc(b, "h0 HCA-1"));
        assert_eq!(b.node(s0).port_slots(), 9, "highest port seen is 8");
        assert_eq!(b.node(s0).guid, 0x20_0000);
        assert_eq!(b.node(h0).guid, 0x10_0000);
        assert_eq!(b.node(h0).port(2).unwrap().guid, 0x10_0002);
        assert_eq!(
            b.node(h0).port(2).unwrap().remote,
            Some(PortRef::new(s1, 1))
        );
        assert_eq!(b.node(s1).port(0).unwrap().lid.raw(), 5);
        let f = d.builder.build().unwrap();
        assert_eq!(f.switch_count(), 2);
        assert_eq!(f.cas().count(), 2);
        assert_eq!(f.lid_owner(Lid::from_raw(6)), Some(PortRef::new(h0, 2)));
        let skipped: Vec<usize> = d.skipped.iter().map(|s| s.line).collect();
        assert_eq!(skipped, [1, 2, 14], "{:?}", d.skipped);
        assert!(d.skipped[1].text.contains("1 discovery trace lines"));
    }

    #[test]
    fn a_bad_line_inside_the_report_is_an_error_with_its_number() {
        let text = REPORT.replace("SW     4  6 0x", "XX     4  6 0x");
        let e = read(&text).err().unwrap();
        assert_eq!(e.line, 9);
        assert!(
            e.message.contains("expected `TYPE LID PORT 0xGUID")
                || e.message.contains("unknown node type"),
            "{e}"
        );
        let text = REPORT.replace(
            "( 's0' - 's1' )\r\nSW     4  6",
            "( 's0' , 's1' )\r\nSW     4  6",
        );
        let e = read(&text).err().unwrap();
        assert_eq!(e.line, 8);
        assert!(e.message.contains("'this node' - 'far node'"), "{e}");
    }

    #[test]
    fn ends_that_disagree_are_an_error() {
        let text = REPORT.replace(
            "SW     5  6 0x0000000000200001 4x QDR - SW     4  6",
            "SW     5  6 0x0000000000200001 4x QDR - SW     4  7",
        );
        let e = read(&text).err().unwrap();
        assert_eq!(e.line, 13);
        assert!(e.message.contains("both ends"), "{e}");
    }
}
