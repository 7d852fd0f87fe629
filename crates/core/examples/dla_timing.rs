//! Times dla's compute and hop-table steps offline on a canonical
//! Dragonfly: `cargo run --release -p osmroute-core --example dla_timing -- A H P`.
use std::time::Instant;

use osmroute_core::fabric::{FabricBuilder, NodeKind, PortRef};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("numbers A H P")).collect();
    let (a, h, p) = (args[0], args[1], args[2]);
    let g = a * h + 1;
    let mut b = FabricBuilder::new();
    let ports = (p + a - 1 + h) as u8;
    let sw: Vec<usize> = (0..g * a).map(|i| b.add_node(NodeKind::Switch, 0x20_0000 + i as u64, "", ports)).collect();
    for s in 0..g * a {
        for k in 0..p {
            let hca = b.add_node(NodeKind::Ca, 0x100_0000 + (s * p + k) as u64 * 2, "", 1);
            b.connect(PortRef::new(hca, 1), PortRef::new(sw[s], (k + 1) as u8)).unwrap();
        }
    }
    for gi in 0..g {
        for i in 0..a {
            for j in i + 1..a {
                b.connect(PortRef::new(sw[gi * a + i], (p + j) as u8), PortRef::new(sw[gi * a + j], (p + i + 1) as u8))
                    .unwrap();
            }
        }
        for k in 0..a * h {
            let o = (gi + k + 1) % g;
            if o < gi {
                continue;
            }
            let back = (gi + g - o - 1) % g;
            b.connect(
                PortRef::new(sw[gi * a + k / h], (p + a + k % h) as u8),
                PortRef::new(sw[o * a + back / h], (p + a + back % h) as u8),
            )
            .unwrap();
        }
    }
    b.assign_lids_sequential(0).unwrap();
    let t = Instant::now();
    let f = b.build().unwrap();
    println!("build fabric: {:?}", t.elapsed());
    let t = Instant::now();
    let r = osmroute_core::engines::route("dla", &f, &Default::default()).unwrap();
    println!("dla route: {:?}", t.elapsed());
    let lids: Vec<u16> = f.lids().filter(|(_, o)| f.node(o.node).is_switch()).map(|(l, _)| l).collect();
    let t = Instant::now();
    let ht = r.hop_table(&f, &lids);
    println!("hop table ({} lids): {:?} (sample {})", lids.len(), t.elapsed(), ht.get(0, 5));
}
