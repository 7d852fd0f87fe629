//! Routes a net file with dla and prints the time and a digest of the
//! routing (forwarding tables, SL-to-VL tables, path SLs), without
//! writing dumps: a quick before/after check that a speed-up changed no
//! entry, and a run short enough for callgrind.
//! `cargo run --release -p osmroute-core --example dla_net_timing -- NET [LMC]`.
use std::time::Instant;

use osmroute_core::routing::PathSl;
use osmroute_core::{Lid, PortNum};

/// FNV-1a, enough to tell two routings apart.
struct Digest(u64);

impl Digest {
    fn eat(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// Prints the engine's debug lines (its steps' times) on stderr.
struct Steps;

impl log::Log for Steps {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.level() <= log::Level::Debug
    }

    fn log(&self, r: &log::Record) {
        eprintln!("{}", r.args());
    }

    fn flush(&self) {}
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if log::set_logger(&Steps).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
    let mut args = std::env::args().skip(1);
    let (Some(net), lmc) = (args.next(), args.next()) else {
        return Err("usage: dla_net_timing NET [LMC]".into());
    };
    let lmc: u8 = lmc.map_or(Ok(0), |l| l.parse())?;
    let text = std::fs::read_to_string(&net)?;
    let mut b = osmroute_core::io::netfile::read(&text)?;
    b.assign_lids_sequential(lmc)?;
    let f = b.build()?;
    let t = Instant::now();
    let r = osmroute_core::pipeline::route_by_name("dla", &f)?.routing;
    let took = t.elapsed();
    let mut lfts = Digest(0xcbf2_9ce4_8422_2325);
    for lft in &r.lfts {
        lfts.eat(lft.as_bytes());
    }
    let mut sl2vl = Digest(0xcbf2_9ce4_8422_2325);
    let mut sls = Digest(0xcbf2_9ce4_8422_2325);
    let graph = f.graph();
    for s in graph.ids() {
        if let Some(tables) = &r.sl2vl {
            let ports = tables.switch_ports(s);
            for i in 0..ports {
                for o in 0..ports {
                    let (i, o) = (PortNum::new(i as u8), PortNum::new(o as u8));
                    sl2vl.eat(tables.switch_table(s, i, o));
                }
            }
        }
        if let PathSl::PerSourceSwitch(per) = &r.path_sl {
            for l in 0..f.lft_len() {
                sls.eat(&[per.get(s, Lid::new(l))]);
            }
        }
    }
    if let Some(tables) = &r.sl2vl {
        sl2vl.eat(&tables.ca_table(&[0xff; 16]));
    }
    if let PathSl::Uniform(sl) = &r.path_sl {
        sls.eat(&[0xfe, *sl]);
    }
    println!(
        "dla route: {took:?}; digests: lfts {:016x} sl2vl {:016x} path sls {:016x}",
        lfts.0, sl2vl.0, sls.0
    );
    Ok(())
}
