//! Multicast under OpenSM and ibsim: hosts join groups as IPoIB and MPI do
//! (SA MCMemberRecord Set, by `c/mcjoin.c`, built here with the system's
//! C compiler and libibumad and run under umad2sim as the host named by
//! SIM_HOST), and the MFTs are read back from the simulated switches with
//! `ibroute -M`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use osmroute_core::dumps::mcfdbs::{self, Tables};
use osmroute_core::rng::Rng;

use super::readback::switches;
use super::{OpenSm, Sim, UMAD2SIM};

/// The IPoIB broadcast group of the default partition (MLID 0xC000).
pub const BROADCAST: &str = "ff12:401b:ffff::ffff:ffff";

/// The join client, compiled once per test binary.
fn mcjoin() -> &'static PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/harness/c/mcjoin.c");
        let bin = std::env::temp_dir().join(format!("osmroute-mcjoin-{}", std::process::id()));
        let out = Command::new("cc")
            .args(["-O1", "-Wall", "-o"])
            .arg(&bin)
            .arg(&src)
            .arg("-libumad")
            .output()
            .expect("run cc (install build-essential)");
        assert!(
            out.status.success(),
            "building mcjoin failed (needs libibumad-dev): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        bin
    })
}

/// JoinState bits of an MCMemberRecord: a full member (creates the group
/// it joins), and a non-member (receives, does not keep the group alive).
pub const FULL_MEMBER: u8 = 1;
pub const NON_MEMBER: u8 = 2;

/// `host` (a node name of the net file) joins `mgids` as a full member, on
/// `sl` (the groups' SL); returns the MLID the SA gave each.
pub fn join(sim: &Sim, host: &str, mgids: &[&str], sl: u8) -> Vec<(String, u16)> {
    join_as(sim, host, mgids, sl, FULL_MEMBER)
}

/// `join` with the JoinState bits `state`.
pub fn join_as(sim: &Sim, host: &str, mgids: &[&str], sl: u8, state: u8) -> Vec<(String, u16)> {
    mcjoin_run(
        sim,
        host,
        mgids,
        &[("MCJOIN_SL", sl), ("MCJOIN_STATE", state)],
        false,
    )
}

/// `host` leaves the JoinState bits `state` of `mgids` (SA Delete; a group
/// whose last full member leaves is deleted).
pub fn leave(sim: &Sim, host: &str, mgids: &[&str], state: u8) {
    mcjoin_run(sim, host, mgids, &[("MCJOIN_STATE", state)], true);
}

/// Runs the client as `host` for `mgids`; the MLID each line names.
fn mcjoin_run(
    sim: &Sim,
    host: &str,
    mgids: &[&str],
    settings: &[(&str, u8)],
    leave: bool,
) -> Vec<(String, u16)> {
    let mut client = Command::new(mcjoin());
    for (name, value) in settings {
        client.env(name, value.to_string());
    }
    if leave {
        client.env("MCJOIN_LEAVE", "1");
    }
    let out = client
        .args(mgids)
        .current_dir(&sim.dir)
        .env("IBSIM_SOCKNAME", &sim.sock)
        .env("LD_PRELOAD", UMAD2SIM)
        .env("SIM_HOST", host)
        .output()
        .expect("run mcjoin");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.lines().count() == mgids.len(),
        "{host} could not {} {mgids:?}: {said}{}",
        if leave { "leave" } else { "join" },
        String::from_utf8_lossy(&out.stderr)
    );
    // "joined MGID mlid 0xC001" (or "left ...")
    said.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let mlid = u16::from_str_radix(w.get(3)?.trim_start_matches("0x"), 16).ok()?;
            Some((w.get(1)?.to_string(), mlid))
        })
        .collect()
}

/// The broadcast group with every host, and `n` groups (MGIDs
/// ff12:1234::N) of 2 to 24 random hosts.
pub fn random_groups(hosts: &[String], n: usize, seed: u64) -> Vec<(String, Vec<String>)> {
    let mut rng = Rng::new(seed);
    let mut groups = vec![(BROADCAST.to_string(), hosts.to_vec())];
    for i in 0..n {
        let mut pick = hosts.to_vec();
        rng.shuffle(&mut pick);
        pick.truncate((2 + rng.below(23)).min(hosts.len()));
        groups.push((format!("ff12:1234::{:x}", i + 1), pick));
    }
    groups
}

/// Every host joins its groups (one client run per host); returns each
/// group's MLID.
pub fn join_all(sim: &Sim, groups: &[(String, Vec<String>)]) -> HashMap<String, u16> {
    join_all_on(sim, groups, 0)
}

/// `join_all` with every group on `sl`.
pub fn join_all_on(sim: &Sim, groups: &[(String, Vec<String>)], sl: u8) -> HashMap<String, u16> {
    let mut by_host: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (mgid, hosts) in groups {
        for h in hosts {
            by_host.entry(h).or_default().push(mgid);
        }
    }
    let mut mlids = HashMap::new();
    for (host, mgids) in by_host {
        for (mgid, mlid) in join(sim, host, &mgids, sl) {
            let known = *mlids.entry(mgid.clone()).or_insert(mlid);
            assert_eq!(known, mlid, "{mgid} has one MLID");
        }
    }
    mlids
}

/// The host names of a net file.
pub fn hosts(net: &str) -> Vec<String> {
    net.lines()
        .filter_map(|l| l.strip_prefix("Hca"))
        .filter_map(|l| l.split('"').nth(1).map(str::to_string))
        .collect()
}

/// OpenSM's multicast dump once it holds `groups` MLIDs and has not
/// changed for three seconds.
pub fn settled_mcfdbs(osm: &OpenSm, groups: usize) -> Tables {
    let start = Instant::now();
    let mut last = (String::new(), Instant::now());
    loop {
        let text = std::fs::read_to_string(osm.dir.join(mcfdbs::MCFDBS_FILE)).unwrap_or_default();
        if text != last.0 {
            last = (text, Instant::now());
        }
        // OpenSM rewrites the file in place, so a read can catch it half
        // written: that is "not settled yet", until the time runs out.
        let tables = match mcfdbs::read(&last.0) {
            Ok(tables) => tables,
            Err(e) => {
                assert!(
                    start.elapsed() < Duration::from_secs(120),
                    "OpenSM's multicast dump does not read: {e:?}"
                );
                std::thread::sleep(Duration::from_millis(250));
                continue;
            }
        };
        let mlids: std::collections::BTreeSet<u16> =
            tables.values().flat_map(|t| t.keys().copied()).collect();
        if mlids.len() == groups && last.1.elapsed() > Duration::from_secs(3) {
            return tables;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the multicast dump has {} MLIDs, not {groups}",
            mlids.len()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The MFTs of every switch as `ibroute -M` reads them back, keyed like
/// OpenSM's dump (switches without entries left out).
pub fn read_back_mfts(sim: &Sim) -> Tables {
    let mut tables = Tables::new();
    for (guid, lid) in switches(sim) {
        let text = sim.tool("ibroute", &["-M", &lid.to_string()]);
        // "     Ports: 0 1 2 ..." gives each port's column; an "x" there in
        // an MLID row sets the port.
        let mut columns: Vec<usize> = Vec::new();
        let mut entries: BTreeMap<u16, Vec<u8>> = BTreeMap::new();
        for line in text.lines() {
            if let Some(at) = line.find("Ports:") {
                columns = line
                    .char_indices()
                    .filter(|&(i, c)| i > at && c.is_ascii_digit())
                    .map(|(i, _)| i)
                    .collect();
            } else if let Some(hex) = line.strip_prefix("0x") {
                let Ok(mlid) = u16::from_str_radix(&hex[..4.min(hex.len())], 16) else {
                    continue;
                };
                let bytes = line.as_bytes();
                let ports: Vec<u8> = columns
                    .iter()
                    .enumerate()
                    .filter(|&(_, &c)| bytes.get(c) == Some(&b'x'))
                    .map(|(p, _)| p as u8)
                    .collect();
                if !ports.is_empty() {
                    entries.insert(mlid, ports);
                }
            }
        }
        if !entries.is_empty() {
            tables.insert(guid, entries);
        }
    }
    tables
}

/// Members per MLID as the dump's masks reach them: (MLID, CA ports).
pub fn members_per_group(tables: &Tables, net: &str) -> HashMap<u16, usize> {
    let fabric = {
        let mut b = osmroute_core::io::netfile::read(net).expect("net file");
        b.assign_lids_sequential(0).expect("LIDs");
        b.build().expect("fabric")
    };
    let groups = mcfdbs::to_groups(&fabric, tables, &|_| 0).expect("the dump fits the fabric");
    groups
        .iter()
        .map(|g| {
            (
                g.mlid,
                osmroute_core::multicast::flood::members(&fabric, g).len(),
            )
        })
        .collect()
}

/// The groups (MGID, MLID) the SA returns for `saquery MCMR --mgid MGID`
/// (one query per group: ibsim carries no multi-packet (RMPP) answers, so
/// a plain `saquery -g` shows only the first MAD's three groups).
pub fn sa_group(sim: &Sim, mgid: &str) -> Vec<(String, u16)> {
    let text = sim.tool("saquery", &["MCMR", "--mgid", mgid]);
    let field = |l: &str, name: &str| {
        l.trim()
            .strip_prefix(name)
            .map(|v| v.trim_start_matches('.').trim().to_string())
    };
    let mgids = text.lines().filter_map(|l| field(l, "MGID"));
    let mlids = text
        .lines()
        .filter_map(|l| field(l, "mlid"))
        .map(|m| u16::from_str_radix(m.trim_start_matches("0x"), 16).expect("a hex MLID"));
    mgids.zip(mlids).collect()
}
