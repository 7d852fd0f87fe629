//! Times an engine's multicast tree rule offline (what the plugin works
//! out on the first group after a routing pass) and the trees of the
//! broadcast group and 100 random groups of 2-24 hosts:
//! `cargo run --release -p osmroute-core --example multicast_timing -- ENGINE NETFILE [VLS [CONF]]`
//! (VLS: the data VLs the ports offer, 8 by default, as `--vls`; CONF: an
//! osmroute.conf).
use std::time::Instant;

use osmroute_core::fabric::PortRef;
use osmroute_core::multicast::{build_group, rules::rule_for};
use osmroute_core::rng::Rng;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (engine, net, vls, conf) = match &args[..] {
        [engine, net] => (engine, net, 8, String::new()),
        [engine, net, vls] => (engine, net, vls.parse()?, String::new()),
        [engine, net, vls, conf] => (engine, net, vls.parse()?, std::fs::read_to_string(conf)?),
        _ => return Err("usage: multicast_timing ENGINE NETFILE [VLS [CONF]]".into()),
    };
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
    let rule = rule.map_err(|e| format!("no rule: {e}"))?;
    println!("covered SLs: {:?}", rule.covered_sls());
    let hosts: Vec<PortRef> = f.cas().map(|n| PortRef::new(n, 1)).collect();
    let mut rng = Rng::new(11);
    let t = Instant::now();
    build_group(&f, &rule, &r, 0xC000, 0, &hosts)?;
    for i in 0..100u16 {
        let mut pick = hosts.clone();
        rng.shuffle(&mut pick);
        pick.truncate(2 + rng.below(23).min(hosts.len() - 2));
        build_group(&f, &rule, &r, 0xC001 + i, 0, &pick)?;
    }
    println!("101 groups' MFTs: {:?}", t.elapsed());
    Ok(())
}
