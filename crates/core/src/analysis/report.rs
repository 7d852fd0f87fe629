//! Everything `osmroute check` reports about a routing: delivery of every
//! CA-to-CA route, hop counts, load per inter-switch channel, SLs and VLs
//! used, and credit loops.

use std::collections::{BTreeMap, HashMap};

use super::credit::{Channel, DependencyGraph};
use crate::fabric::{Fabric, Lid, NodeId, PortNum, PortRef, SwitchId};
use crate::routing::walk::Walk;
use crate::routing::{Routing, ALL_VL0};

pub struct Report {
    /// CA-port-to-CA-LID routes examined.
    pub routes: u64,
    /// Routes that do not arrive, by kind, with one example each.
    pub failures: BTreeMap<&'static str, (u64, String)>,
    /// Inter-switch hops -> routes.
    pub hops: BTreeMap<usize, u64>,
    /// Routes per directed inter-switch channel (switch, out-port).
    pub channel_load: HashMap<(SwitchId, PortNum), u64>,
    pub sls_used: Vec<u8>,
    pub vls_used: Vec<u8>,
    pub dependencies: usize,
    /// One credit loop, if any.
    pub credit_loop: Option<Vec<Channel>>,
}

impl Report {
    pub fn delivered(&self) -> bool {
        self.failures.is_empty()
    }

    pub fn max_hops(&self) -> usize {
        self.hops.keys().copied().max().unwrap_or(0)
    }

    /// Edge forwarding index: the most routes on one inter-switch channel.
    pub fn edge_forwarding_index(&self) -> u64 {
        self.channel_load.values().copied().max().unwrap_or(0)
    }
}

/// One thread's share of the routes: everything `Report` sums up.
struct Partial<'a> {
    routes: u64,
    failures: BTreeMap<&'static str, (u64, String)>,
    hops: BTreeMap<usize, u64>,
    /// Routes per channel of the switch graph.
    load: Vec<u64>,
    sls: [bool; 16],
    vls: [bool; 16],
    deps: DependencyGraph<'a>,
}

/// A representative CA port, its LID, and the nodes of the CA ports it
/// stands for.
type SourceGroup = (PortRef, Lid, Vec<NodeId>);

/// Traces every route from a CA port to a CA LID of another node.
///
/// Tables are destination-based, so CA ports on one switch share their
/// paths; with one SL for all paths and identical SL2VL rows for their
/// in-ports they also share VLs, and one representative per such group is
/// traced, weighted by the group's size.
pub fn analyze(fabric: &Fabric, routing: &Routing) -> Report {
    analyze_with_progress(fabric, routing, &|_, _| {})
}

/// `analyze`, on all cores, calling `progress(done, total)` as groups of
/// sources are traced. The result does not depend on the number of
/// threads.
pub fn analyze_with_progress(
    fabric: &Fabric,
    routing: &Routing,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Report {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    analyze_on(fabric, routing, progress, cores).0
}

/// `analyze_with_progress`, also handing back the dependency graph of the
/// routes (for checks that add dependencies of their own, such as
/// multicast's).
pub fn analyze_with_dependencies<'a>(
    fabric: &'a Fabric,
    routing: &Routing,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> (Report, DependencyGraph<'a>) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    analyze_on(fabric, routing, progress, cores)
}

fn analyze_on<'a>(
    fabric: &'a Fabric,
    routing: &Routing,
    progress: &(dyn Fn(usize, usize) + Sync),
    threads: usize,
) -> (Report, DependencyGraph<'a>) {
    let graph = fabric.graph();
    let groups = source_groups(fabric, routing);
    let dlids: Vec<(Lid, PortRef)> = fabric.ca_lids().collect();
    let threads = threads.clamp(1, groups.len().max(1));
    let chunk = groups.len().div_ceil(threads).max(1);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = groups.len();
    let partials: Vec<Partial> = std::thread::scope(|scope| {
        let workers: Vec<_> = groups
            .chunks(chunk)
            .map(|part| {
                let (dlids, done) = (&dlids, &done);
                scope.spawn(move || {
                    trace_groups(fabric, routing, part, dlids, &|| {
                        let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        progress(n, total);
                    })
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a tracing thread panicked"))
            .collect()
    });
    let mut report = Report {
        routes: 0,
        failures: BTreeMap::new(),
        hops: BTreeMap::new(),
        channel_load: HashMap::new(),
        sls_used: Vec::new(),
        vls_used: Vec::new(),
        dependencies: 0,
        credit_loop: None,
    };
    let mut deps = DependencyGraph::new(graph);
    let mut load = vec![0u64; graph.channel_count()];
    let (mut sls, mut vls) = ([false; 16], [false; 16]);
    // In the order of the groups, so the first example of a failure is the
    // one a single thread would have found.
    for p in partials {
        report.routes += p.routes;
        for (kind, (n, example)) in p.failures {
            let entry = report.failures.entry(kind).or_insert((0, example));
            entry.0 += n;
        }
        for (h, n) in p.hops {
            *report.hops.entry(h).or_insert(0) += n;
        }
        load.iter_mut().zip(&p.load).for_each(|(a, b)| *a += b);
        (0..16).for_each(|i| {
            sls[i] |= p.sls[i];
            vls[i] |= p.vls[i];
        });
        deps.merge(p.deps);
    }
    deps.sort();
    for (c, &n) in load.iter().enumerate().filter(|(_, &n)| n > 0) {
        report.channel_load.insert(graph.channel_port(c), n);
    }
    report.sls_used = (0..16).filter(|&i| sls[i as usize]).collect();
    report.vls_used = (0..16).filter(|&i| vls[i as usize]).collect();
    report.dependencies = deps.edge_count();
    report.credit_loop = deps.find_cycle();
    (report, deps)
}

/// The sources to trace: CA ports grouped by switch where their paths and
/// VLs must be the same (see `analyze`).
fn source_groups(fabric: &Fabric, routing: &Routing) -> Vec<SourceGroup> {
    let graph = fabric.graph();
    let shared_sl = routing.path_sl.same_per_switch();
    let mut groups: Vec<SourceGroup> = Vec::new();
    for s in fabric.switch_ids() {
        let mut by_row: HashMap<Vec<[u8; 16]>, usize> = HashMap::new();
        for (port, remote) in fabric.switch_node(s).links() {
            if fabric.node(remote.node).is_switch() {
                continue;
            }
            let Some(slid) = fabric.port(remote).map(|p| p.lid).filter(|l| !l.is_none()) else {
                continue;
            };
            let key: Vec<[u8; 16]> = if shared_sl {
                (0..graph.port_slots(s))
                    .map(|o| {
                        routing
                            .sl2vl
                            .as_ref()
                            .map_or(ALL_VL0, |t| *t.switch_table(s, port, PortNum::new(o as u8)))
                    })
                    .collect()
            } else {
                vec![[port.raw(); 16]] // every source on its own
            };
            match by_row.get(&key) {
                Some(&g) => groups[g].2.push(remote.node),
                None => {
                    by_row.insert(key, groups.len());
                    groups.push((remote, slid, vec![remote.node]));
                }
            }
        }
    }
    groups
}

/// Traces the routes of `groups` to every CA LID.
fn trace_groups<'a>(
    fabric: &'a Fabric,
    routing: &Routing,
    groups: &[SourceGroup],
    dlids: &[(Lid, PortRef)],
    group_done: &dyn Fn(),
) -> Partial<'a> {
    let graph = fabric.graph();
    let vl_of = |s: SwitchId, inp: PortNum, out: PortNum, sl: u8| -> u8 {
        routing
            .sl2vl
            .as_ref()
            .map_or(ALL_VL0[sl as usize & 0xf], |t| t.vl(s, inp, out, sl))
    };
    let mut out = Partial {
        routes: 0,
        failures: BTreeMap::new(),
        hops: BTreeMap::new(),
        load: vec![0; graph.channel_count()],
        sls: [false; 16],
        vls: [false; 16],
        deps: DependencyGraph::new(graph),
    };
    for (src, slid, members) in groups {
        for &(dlid, owner) in dlids {
            let weight = members.iter().filter(|&&m| m != owner.node).count() as u64;
            if weight == 0 {
                continue;
            }
            out.routes += weight;
            let sl = routing.path_sl.sl(*slid, dlid);
            out.sls[sl as usize & 0xf] = true;
            let mut prev: Option<Channel> = None;
            let mut hops = 0usize;
            let mut failure = None;
            for hop in Walk::from_port(fabric, &routing.lfts, *src, dlid) {
                let hop = match hop {
                    Ok(hop) => hop,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                };
                let vl = vl_of(hop.switch, hop.in_port, hop.out_port, sl);
                out.vls[vl as usize & 0xf] = true;
                let here = Channel {
                    switch: hop.switch,
                    port: hop.out_port,
                    vl,
                };
                if let Some(p) = prev {
                    out.deps.add(p, here);
                    out.load[graph.channel(p.switch, p.port)] += weight;
                    hops += 1;
                }
                prev = Some(here);
            }
            match failure {
                Some(e) => {
                    let entry = out.failures.entry(e.kind()).or_insert((0, String::new()));
                    if entry.0 == 0 {
                        entry.1 = format!(
                            "{} -> LID {dlid}: {e}",
                            crate::fabric::describe(fabric.node(src.node))
                        );
                    }
                    entry.0 += weight;
                }
                None => *out.hops.entry(hops).or_insert(0) += weight,
            }
        }
        group_done();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::dragonfly::{dragonfly, Params};

    fn fabric(a: usize, h: usize, p: usize) -> Fabric {
        let mut b = dragonfly(&Params::new(a, h, p)).unwrap();
        b.assign_lids_sequential(0).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn dla_is_delivered_minimal_and_credit_loop_free() {
        let f = fabric(4, 2, 2);
        let r = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        let rep = analyze(&f, &r);
        assert!(rep.delivered(), "{:?}", rep.failures);
        assert_eq!(rep.routes, 72 * 71);
        assert_eq!(rep.max_hops(), 3);
        assert_eq!(rep.vls_used, vec![0, 1]);
        assert_eq!(rep.sls_used, vec![0]);
        assert!(rep.credit_loop.is_none(), "{:?}", rep.credit_loop);
        assert!(rep.dependencies > 0);
    }

    #[test]
    fn dla_without_its_vl_shift_has_a_credit_loop() {
        let f = fabric(4, 2, 2);
        let mut r = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        r.sl2vl = None;
        let rep = analyze(&f, &r);
        assert!(rep.delivered());
        let cycle = rep
            .credit_loop
            .expect("a Dragonfly routed minimally on one VL has credit loops");
        assert!(cycle.len() >= 3);
        assert!(cycle.iter().all(|c| c.vl == 0));
    }

    /// The threads only share the work: one or three give the same report,
    /// down to the first example of a failure and the cycle found.
    #[test]
    fn the_report_does_not_depend_on_the_threads() {
        let f = fabric(4, 2, 2);
        let mut r = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        r.sl2vl = None;
        let victim = f.ca_lids().nth(5).unwrap().0;
        r.lfts[3].set(victim, crate::routing::NO_PATH);
        let (one, three) = (
            analyze_on(&f, &r, &|_, _| {}, 1).0,
            analyze_on(&f, &r, &|_, _| {}, 3).0,
        );
        assert_eq!(one.routes, three.routes);
        assert_eq!(one.failures, three.failures);
        assert!(!one.failures.is_empty());
        assert_eq!(one.hops, three.hops);
        assert_eq!(one.channel_load, three.channel_load);
        assert_eq!(
            (one.sls_used, one.vls_used),
            (three.sls_used, three.vls_used)
        );
        assert_eq!(one.dependencies, three.dependencies);
        assert!(one.credit_loop.is_some());
        assert_eq!(one.credit_loop, three.credit_loop);
    }

    #[test]
    fn broken_tables_are_counted_by_kind() {
        let f = fabric(3, 1, 1);
        let mut r = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        let victim = f.ca_lids().next().unwrap().0;
        for lft in &mut r.lfts {
            lft.set(victim, crate::routing::NO_PATH);
        }
        let rep = analyze(&f, &r);
        let (count, example) = &rep.failures["black hole"];
        assert_eq!(*count as usize, f.cas().count() - 1);
        assert!(example.contains(&format!("LID {victim}")), "{example}");
    }

    /// Whether the dependencies between (switch, out-port, VL) channels of
    /// every CA-to-CA path close a cycle: worked out here from scratch (a
    /// depth-first search over a plain edge set), to judge `analyze`.
    fn brute_force_loop(f: &Fabric, r: &Routing) -> bool {
        use std::collections::{HashMap, HashSet};
        type Channel = (SwitchId, u8, u8);
        let sl2vl = r.sl2vl.as_ref().unwrap();
        let mut next: HashMap<Channel, HashSet<Channel>> = HashMap::new();
        for src in f.cas() {
            let slid = f.port(crate::fabric::PortRef::new(src, 1)).unwrap().lid;
            for (dlid, _) in f.ca_lids() {
                let sl = r.path_sl.sl(slid, dlid);
                let hops = crate::routing::walk::trace(
                    f,
                    &r.lfts,
                    crate::fabric::PortRef::new(src, 1),
                    dlid,
                )
                .unwrap();
                let channels: Vec<_> = hops
                    .iter()
                    .filter(|h| f.graph().switch_behind(h.switch, h.out_port).is_some())
                    .map(|h| {
                        (
                            h.switch,
                            h.out_port.raw(),
                            sl2vl.vl(h.switch, h.in_port, h.out_port, sl),
                        )
                    })
                    .collect();
                for w in channels.windows(2) {
                    next.entry(w[0]).or_default().insert(w[1]);
                }
            }
        }
        // 0 unseen, 1 on the stack, 2 done.
        let mut state: HashMap<Channel, u8> = HashMap::new();
        fn visit(
            c: Channel,
            next: &HashMap<Channel, HashSet<Channel>>,
            state: &mut HashMap<Channel, u8>,
        ) -> bool {
            state.insert(c, 1);
            for &d in next.get(&c).into_iter().flatten() {
                match state.get(&d).copied().unwrap_or(0) {
                    1 => return true,
                    0 if visit(d, next, state) => return true,
                    _ => {}
                }
            }
            state.insert(c, 2);
            false
        }
        let starts: Vec<_> = next.keys().copied().collect();
        starts
            .into_iter()
            .any(|c| state.get(&c).copied().unwrap_or(0) == 0 && visit(c, &next, &mut state))
    }

    /// Random per-port SL2VL tables (as some engines and QoS policies
    /// program them: thousands of distinct tables) get the same verdict as
    /// the brute-force search, loop or not.
    #[test]
    fn random_per_port_vls_get_the_right_credit_loop_verdict() {
        let f = fabric(4, 2, 2);
        let dla = crate::pipeline::route_by_name("dla", &f).unwrap().routing;
        let figure_8 = dla.sl2vl.clone().unwrap();
        let (mut loops, mut free) = (0, 0);
        for seed in 1..=12 {
            let mut rng = crate::rng::Rng::new(seed);
            // Each port pair keeps Figure 8's VL or, with a chance that
            // grows with the seed, gets a random one of 4 per SL.
            let chance = seed as f64 / 40.0;
            let mut sl2vl = crate::routing::Sl2Vl::new(&f, crate::routing::ALL_VL0);
            for s in f.switch_ids() {
                let ports = f.switch_node(s).port_slots() as u8;
                for (i, o) in (0..ports).flat_map(|i| (0..ports).map(move |o| (i, o))) {
                    let (i, o) = (
                        crate::fabric::PortNum::new(i),
                        crate::fabric::PortNum::new(o),
                    );
                    let mut table = *figure_8.switch_table(s, i, o);
                    for vl in table.iter_mut() {
                        if rng.unit() < chance {
                            *vl = rng.below(4) as u8;
                        }
                    }
                    sl2vl.set_switch(s, i, o, table);
                }
            }
            if seed == 12 {
                assert!(
                    sl2vl.distinct_tables() > 1000,
                    "{}",
                    sl2vl.distinct_tables()
                );
            }
            let r = Routing {
                sl2vl: Some(sl2vl),
                ..dla.clone()
            };
            let found = analyze(&f, &r).credit_loop.is_some();
            assert_eq!(found, brute_force_loop(&f, &r), "seed {seed}");
            if found {
                loops += 1;
            } else {
                free += 1;
            }
        }
        assert!(
            loops > 0 && free > 0,
            "both verdicts occur: {loops} with loops, {free} without"
        );
    }
}
