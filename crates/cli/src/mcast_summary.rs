//! The multicast part of `check`: the groups of `opensm.mcfdbs`, each on
//! its SL (`--mcast-sl`), their trees, and whether their floods close a
//! credit loop with unicast.

use std::path::Path;

use osmroute_core::analysis::credit::DependencyGraph;
use osmroute_core::dumps::mcfdbs::{self, MCFDBS_FILE};
use osmroute_core::multicast::check::check;
use osmroute_core::multicast::GroupMft;
use osmroute_core::{Fabric, Routing};
use serde::Serialize;

/// `--mcast-sl`: `SL` for every group, or `MLID=SL` for one.
#[derive(Clone, Copy, Debug)]
pub struct McastSl {
    pub mlid: Option<u16>,
    pub sl: u8,
}

pub fn parse_mcast_sl(text: &str) -> Result<McastSl, String> {
    let bad =
        || format!("'{text}': give an SL (0-15) for every group or MLID=SL for one, e.g. 0xC001=1");
    let sl_of = |t: &str| t.trim().parse::<u8>().ok().filter(|&s| s < 16);
    match text.split_once('=') {
        None => Ok(McastSl {
            mlid: None,
            sl: sl_of(text).ok_or_else(bad)?,
        }),
        Some((mlid, sl)) => {
            let mlid = mlid.trim();
            let mlid = mlid
                .strip_prefix("0x")
                .or_else(|| mlid.strip_prefix("0X"))
                .map_or_else(
                    || mlid.parse::<u16>().ok(),
                    |h| u16::from_str_radix(h, 16).ok(),
                )
                .filter(|&m| m >= osmroute_core::multicast::MLID_START)
                .ok_or_else(bad)?;
            Ok(McastSl {
                mlid: Some(mlid),
                sl: sl_of(sl).ok_or_else(bad)?,
            })
        }
    }
}

/// The SL of `mlid`: its own `--mcast-sl MLID=SL`, else the last plain
/// `--mcast-sl SL`, else 0 (the SL OpenSM gives the IPoIB broadcast group
/// and, by default, every group created without one).
pub fn sl_for(sls: &[McastSl], mlid: u16) -> u8 {
    sls.iter()
        .rev()
        .find(|s| s.mlid == Some(mlid))
        .or_else(|| sls.iter().rev().find(|s| s.mlid.is_none()))
        .map_or(0, |s| s.sl)
}

/// The groups in `dir`'s multicast dump, if it has one.
pub fn read_groups(
    dir: &Path,
    fabric: &Fabric,
    sls: &[McastSl],
) -> Result<Option<Vec<GroupMft>>, String> {
    let path = dir.join(MCFDBS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let tables = mcfdbs::read(&text).map_err(|e| e.to_string())?;
    mcfdbs::to_groups(fabric, &tables, &|m| sl_for(sls, m))
        .map(Some)
        .map_err(|e| e.to_string())
}

#[derive(Serialize)]
pub struct GroupLine {
    pub mlid: String,
    pub sl: u8,
    pub members: usize,
    pub root: Option<String>,
    pub depth: u32,
    /// (sender, member) pairs without a copy / with more than one.
    pub unreached: u64,
    pub duplicated: u64,
    pub forwarding_loop: bool,
}

#[derive(Serialize)]
pub struct MulticastSummary {
    pub groups: Vec<GroupLine>,
    /// Channel dependencies the groups add to unicast's.
    pub added_dependencies: usize,
    /// A credit loop of unicast and multicast together, as "switch port VL
    /// (made by ...)" steps, when there is one.
    pub credit_loop: Option<Vec<String>>,
}

impl MulticastSummary {
    pub fn ok(&self) -> bool {
        self.credit_loop.is_none()
            && self
                .groups
                .iter()
                .all(|g| g.unreached == 0 && g.duplicated == 0 && !g.forwarding_loop)
    }

    pub fn compute(
        fabric: &Fabric,
        routing: &Routing,
        groups: &[GroupMft],
        unicast: &DependencyGraph<'_>,
    ) -> Self {
        let m = check(fabric, routing, groups, unicast);
        MulticastSummary {
            groups: m
                .groups
                .iter()
                .map(|g| GroupLine {
                    mlid: format!("{:#06X}", g.mlid),
                    sl: g.sl,
                    members: g.members,
                    root: g.root.map(|r| fabric.describe_switch(r)),
                    depth: g.depth,
                    unreached: g.delivery.unreached,
                    duplicated: g.delivery.duplicated,
                    forwarding_loop: g.delivery.looping,
                })
                .collect(),
            added_dependencies: m.added_dependencies,
            credit_loop: m.credit_loop.map(|cycle| {
                cycle
                    .iter()
                    .map(|step| {
                        format!(
                            "{} port {} VL {} (then: {})",
                            fabric.describe_switch(step.channel.switch),
                            step.channel.port,
                            step.channel.vl,
                            step.made_by.join(", ")
                        )
                    })
                    .collect()
            }),
        }
    }

    /// The lines `check` prints.
    pub fn print(&self) {
        println!("multicast groups: {}", self.groups.len());
        for g in &self.groups {
            let mut problems = Vec::new();
            if g.unreached > 0 {
                problems.push(format!("{} sender-member pairs unreached", g.unreached));
            }
            if g.duplicated > 0 {
                problems.push(format!(
                    "{} sender-member pairs get duplicates",
                    g.duplicated
                ));
            }
            if g.forwarding_loop {
                problems.push("the masks close a forwarding loop".to_string());
            }
            println!(
                "  MLID {} SL {}: {} members, root {}, depth {}{}",
                g.mlid,
                g.sl,
                g.members,
                g.root.as_deref().unwrap_or("-"),
                g.depth,
                if problems.is_empty() {
                    String::new()
                } else {
                    format!(", FAIL: {}", problems.join("; "))
                }
            );
        }
        match &self.credit_loop {
            None => println!(
                "credit loops with multicast: none ({} dependencies added by the groups)",
                self.added_dependencies
            ),
            Some(c) => println!("credit loops with multicast: FOUND, {}", c.join(" -> ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_sls_default_to_0_and_can_be_given_per_group() {
        let sls: Vec<McastSl> = ["3", "0xC001=5", "49154=7"]
            .iter()
            .map(|t| parse_mcast_sl(t).unwrap())
            .collect();
        assert_eq!(sl_for(&[], 0xC000), 0);
        assert_eq!(sl_for(&sls, 0xC000), 3);
        assert_eq!(sl_for(&sls, 0xC001), 5);
        assert_eq!(sl_for(&sls, 0xC002), 7);
        for bad in ["16", "0x10=1", "0xC000=x", "x"] {
            assert!(parse_mcast_sl(bad).is_err(), "{bad}");
        }
    }
}
