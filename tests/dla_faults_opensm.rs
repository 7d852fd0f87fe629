//! dla while cables and switches fail: the distribution's OpenSM runs
//! long (`sweep_interval 2`, no `-o`) on an ibsim Dragonfly, and cables
//! and whole switches are unlinked and relinked through ibsim's console.
//! Every re-sweep must be routed by dla itself (no decline, no fallback,
//! no ERR line), the tables read back from the simulated switches must be
//! the ones dla computes offline for the fabric as it now is, deliver
//! every pair and be free of credit loops (our check and ibdmchk), and
//! once everything is relinked the tables must equal those of the start.

mod harness;

use harness::live::Live;
use osmroute_core::gen::dragonfly;
use osmroute_core::io::netfile;

fn start(name: &str, params: &dragonfly::Params) -> Live {
    Live::start(
        name,
        "dla",
        netfile::write(&dragonfly::dragonfly(params).expect("valid parameters")),
    )
}

/// Port `i` (0-based) of the generator's local ports of a switch, and of
/// its global ports (hosts come first, then a-1 local, then h global).
fn local_port(params: &dragonfly::Params, i: usize) -> u8 {
    (params.p + 1 + i) as u8
}

fn global_port(params: &dragonfly::Params, i: usize) -> u8 {
    (params.p + params.a + i) as u8
}

/// A global cable, a local cable and a whole switch fail one after the
/// other, each re-sweep is dla's and checked; relinked, the tables are the
/// first ones again (and so are the SL2VL and path-SL files).
#[test]
fn dla_routes_every_resweep_while_cables_and_a_switch_fail() {
    let params = dragonfly::Params::new(4, 2, 2);
    let mut live = start("df-faults", &params);
    let (fabric, first, _) = live.check();
    let first = live.first_pass(first);
    // The SM's own host is df-g0-s0-h0: its switch stays.
    let steps = [
        format!("unlink \"df-g1-s0\"[{}]", global_port(&params, 0)),
        format!("unlink \"df-g2-s1\"[{}]", local_port(&params, 0)),
        "unlink \"df-g5-s2\"".to_string(),
        format!("unlink \"df-g7-s3\"[{}]", global_port(&params, 1)),
    ];
    for step in &steps {
        live.faults(std::slice::from_ref(step));
        let (now, _, _) = live.check();
        assert!(now.switch_count() <= fabric.switch_count());
    }
    assert!(live
        .osm
        .log()
        .contains("pair(s) of groups without a global cable"));
    live.undo_and_expect(&steps, &first);
}

/// Damage at once on the 342-host Dragonfly: a tenth of the global cables
/// (every pair of groups has one), two local cables and a switch, then all
/// back; and a global cable flapping. Every pass is dla's.
#[test]
fn dla_routes_heavy_damage_and_flaps_live() {
    let params = dragonfly::Params::new(6, 3, 3);
    let mut live = start("df-damage", &params);
    let (_, first, _) = live.check();
    let first = live.first_pass(first);
    let g = params.a * params.h + 1;
    // Every group's first global port on every third group: about a tenth
    // of the 171 global cables (one end named; ibsim takes the cable down).
    let mut damage: Vec<String> = (1..g)
        .step_by(3)
        .map(|group| {
            format!(
                "unlink \"df-g{group}-s{}\"[{}]",
                group % params.a,
                global_port(&params, group % params.h)
            )
        })
        .collect();
    damage.push(format!("unlink \"df-g4-s0\"[{}]", local_port(&params, 1)));
    damage.push(format!("unlink \"df-g9-s5\"[{}]", local_port(&params, 3)));
    damage.push("unlink \"df-g12-s3\"".to_string());
    live.faults(&damage);
    live.check();
    // A global cable of group 0 that the damage left up.
    let damaged_ends: Vec<(String, u8)> = live
        .outage
        .cut
        .iter()
        .flat_map(|(n, p)| [(n.clone(), *p), live.outage.peer(n, *p)])
        .collect();
    let flapping = (0..params.h)
        .map(|i| ("df-g0-s1".to_string(), global_port(&params, i)))
        .find(|end| {
            !damaged_ends.contains(end) && !damaged_ends.contains(&live.outage.peer(&end.0, end.1))
        })
        .map(|(n, p)| format!("\"{n}\"[{p}]"))
        .expect("a global cable of df-g0-s1 is up");
    for _ in 0..3 {
        live.faults(&[format!("unlink {flapping}")]);
        live.faults(&[format!("relink {flapping}")]);
    }
    live.undo_and_expect(&damage, &first);
}
