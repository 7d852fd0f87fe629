//! Times dla's compute and hop-table steps offline on a generated
//! Dragonfly: `cargo run --release -p osmroute-core --example dla_timing -- A H P`.
use std::time::Instant;

use osmroute_core::gen::dragonfly::{dragonfly, Params};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    let [a, h, p] = args[..] else {
        return Err("usage: dla_timing A H P".into());
    };
    let mut b = dragonfly(&Params::new(a, h, p))?;
    b.assign_lids_sequential(0)?;
    let f = b.build()?;
    let t = Instant::now();
    let r = osmroute_core::pipeline::route_by_name("dla", &f)?.routing;
    println!("dla route: {:?}", t.elapsed());
    let lids: Vec<osmroute_core::Lid> = f
        .lids()
        .filter(|(_, o)| f.node(o.node).is_switch())
        .map(|(l, _)| l)
        .collect();
    let t = Instant::now();
    let _ = r.hop_table(&f, &lids);
    println!("hop table ({} switch LIDs): {:?}", lids.len(), t.elapsed());
    Ok(())
}
