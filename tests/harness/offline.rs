//! Rebuilding a live run offline: the fabric as an operator would (the
//! net file plus OpenSM's guid2lid cache), and comparing an offline
//! routing with what the switches were programmed with.

use osmroute_core::config::Settings;
use osmroute_core::dumps::switch_sl::{self, SWITCH_SL_FILE};
use osmroute_core::io::guid2lid::Guid2Lid;
use osmroute_core::io::netfile;
use osmroute_core::{Fabric, Routing};

use super::OpenSm;

/// `net` with the LIDs OpenSM assigned, read from its guid2lid cache; it
/// must give the LIDs the read-back fabric has.
pub fn fabric_with_opensm_lids(osm: &OpenSm, net: &str, read_back: &Fabric) -> Fabric {
    let mut builder = netfile::read(net).expect("net file");
    let guid2lid =
        std::fs::read_to_string(osm.dir.join("cache/guid2lid")).expect("OpenSM's guid2lid");
    Guid2Lid::read(&guid2lid)
        .expect("guid2lid parses")
        .apply(&mut builder)
        .expect("every port in guid2lid");
    let fabric = builder.build().expect("fabric");
    let lids = |f: &Fabric| {
        f.lids()
            .map(|(l, o)| (l, f.node(o.node).guid))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lids(&fabric),
        lids(read_back),
        "guid2lid gives the LIDs the switches route"
    );
    fabric
}

/// `engine` run offline with the osmroute.conf text `conf` on `net` with
/// OpenSM's LIDs gives exactly the tables read back from the switches;
/// returns that fabric and routing for further checks.
pub fn assert_switches_hold_offline_run(
    osm: &OpenSm,
    net: &str,
    (read_fabric, read): (&Fabric, &Routing),
    engine: &str,
    conf: &str,
) -> (Fabric, Routing) {
    let fabric = fabric_with_opensm_lids(osm, net, read_fabric);
    let info = osmroute_core::engines::find(engine).expect("an engine of ours");
    let settings = Settings::parse(conf, "test", &osmroute_core::engines::config_sections());
    let offline = osmroute_core::pipeline::route(info, &settings, &fabric)
        .unwrap_or_else(|e| panic!("offline {engine}: {e}"))
        .routing;
    assert_same_lfts(&fabric, &offline, read);
    (fabric, offline)
}

/// The path SLs the plugin dumped equal `offline`'s.
pub fn assert_dumped_path_sls(osm: &OpenSm, fabric: &Fabric, offline: &Routing) {
    let dumped =
        switch_sl::read(fabric, &osm.file(SWITCH_SL_FILE)).expect("the plugin's switch-SL file");
    assert_eq!(&dumped, &offline.path_sl, "path SLs");
}

/// Every LID's entry on every switch of `offline` equals the read-back one
/// (both fabrics number their switches in GUID order).
pub fn assert_same_lfts(fabric: &Fabric, offline: &Routing, read: &Routing) {
    for (s, (ours, theirs)) in offline.lfts.iter().zip(&read.lfts).enumerate() {
        for (lid, _) in fabric.lids() {
            assert_eq!(ours.get(lid), theirs.get(lid), "switch #{s}, LID {lid}");
        }
    }
}
