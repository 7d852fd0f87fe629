//! Times an engine's multicast tree rule offline (what the plugin works
//! out on the first group after a routing pass) and the trees of the
//! broadcast group and 100 random groups of 2-24 hosts, and counts how
//! each group's tree was made safe (cut from a master tree, checked
//! alone, or OpenSM's kind of tree unchecked):
//! `cargo run --release -p osmroute-core --example multicast_timing -- ENGINE NETFILE [VLS [CONF [SL]]]`
//! (VLS: the data VLs the ports offer, 8 by default, as `--vls`; CONF: an
//! osmroute.conf, `-` for none; SL: the groups' SL, 0 by default). With
//! `OSMROUTE_NO_GROUP_CHECK` set, groups no master tree serves get
//! OpenSM's kind of tree unchecked, as before groups were checked alone.
use std::time::Instant;

use osmroute_core::fabric::PortRef;
use osmroute_core::multicast::per_group::GroupChecker;
use osmroute_core::multicast::{build_group_checked, fat_tree, rules::rule_for, Checked};
use osmroute_core::rng::Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (engine, net) = match &args[..] {
        [engine, net, ..] if args.len() <= 5 => (engine, net),
        _ => return Err("usage: multicast_timing ENGINE NETFILE [VLS [CONF [SL]]]".into()),
    };
    let vls = args.get(2).map_or(Ok(8), |v| v.parse())?;
    let conf = match args.get(3).map(String::as_str) {
        None | Some("-") => String::new(),
        Some(path) => std::fs::read_to_string(path)?,
    };
    let sl: u8 = args.get(4).map_or(Ok(0), |s| s.parse())?;
    let mut b = osmroute_core::io::netfile::read(&std::fs::read_to_string(net)?)?;
    b.assign_lids_sequential(0)?;
    b.set_vl_budget(osmroute_core::fabric::VlBudget {
        data_vls: vls,
        ..Default::default()
    });
    let f = b.build()?;
    let t = Instant::now();
    let settings = osmroute_core::config::Settings::parse(
        &conf,
        "osmroute.conf",
        &osmroute_core::engines::config_sections(),
    );
    let info = osmroute_core::engines::find(engine)?;
    let r = osmroute_core::pipeline::route(info, &settings, &f)?.routing;
    println!(
        "{engine} route: {:?}, {} VL(s), unicast SLs {:?}",
        t.elapsed(),
        r.vls_needed(),
        r.path_sl.sls_used()
    );
    let t = Instant::now();
    let rule = rule_for(engine, &f, &r);
    println!("tree rule: {:?}", t.elapsed());
    match &rule {
        Ok(rule) => println!("covered SLs: {:?}", rule.covered_sls()),
        Err(e) => println!("no rule: {e}"),
    }
    let rule = rule.ok();
    let t = Instant::now();
    let mut checker = if std::env::var_os("OSMROUTE_NO_GROUP_CHECK").is_some() {
        None
    } else {
        let extra = fat_tree::downward_candidates(&f).unwrap_or_default();
        match GroupChecker::new(&f, &r, rule.as_ref(), &extra) {
            Ok(c) => Some(c),
            Err(e) => {
                println!("no group is checked alone: {e}");
                None
            }
        }
    };
    println!(
        "group checker: {:?}, {} dependencies kept",
        t.elapsed(),
        checker.as_ref().map_or(0, GroupChecker::kept_dependencies)
    );
    let hosts: Vec<PortRef> = f.cas().map(|n| PortRef::new(n, 1)).collect();
    let mut rng = Rng::new(11);
    let mut groups = vec![(0xC000u16, hosts.clone())];
    for i in 0..100u16 {
        let mut pick = hosts.clone();
        rng.shuffle(&mut pick);
        pick.truncate(2 + rng.below(23).min(hosts.len() - 2));
        groups.push((0xC001 + i, pick));
    }
    let t = Instant::now();
    let (mut master, mut alone, mut unchecked) = (0, 0, Vec::new());
    for (mlid, members) in &groups {
        let (_, how) =
            build_group_checked(&f, rule.as_ref(), checker.as_mut(), &r, *mlid, sl, members)?;
        match how {
            Checked::Master => master += 1,
            Checked::Alone => alone += 1,
            Checked::Unchecked(why) => unchecked.push((*mlid, why)),
        }
    }
    println!("101 groups' MFTs on SL {sl}: {:?}", t.elapsed());
    println!(
        "groups: {master} cut from master trees, {alone} checked alone, {} unchecked",
        unchecked.len()
    );
    if let Some((mlid, why)) = unchecked.first() {
        println!("first unchecked: MLID {mlid:#06X}: {why}");
    }
    if let Some(c) = &checker {
        println!(
            "kept: {} group floods, {} dependencies",
            c.kept_groups(),
            c.kept_dependencies()
        );
    }
    Ok(())
}
