//! What OpenSM's own log says about a routing pass: which engine configured
//! the tables and how long routing took, from OpenSM's timestamps ("building
//! routing with" needs log flag VERBOSE, 0x04).

/// The engine that configured the tables, and the seconds from "building
/// routing with" to "tables configured" when both lines are in the log.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoutingPass {
    pub engine: Option<String>,
    pub seconds: Option<f64>,
    /// VLs the engine said it uses: our plugin's "routed ... with N VL(s)"
    /// (every VL it programs, a VL kept for multicast included), else
    /// dfsssp's "Virtual Lanes needed" or an older plugin's "deadlock
    /// removal needed N virtual layers".
    pub vls_needed: Option<u8>,
}

/// The number after `marker` on the first line that has it.
fn number_after(log: &str, marker: &str) -> Option<u8> {
    let line = log.lines().find(|l| l.contains(marker))?;
    let rest = &line[line.find(marker)? + marker.len()..];
    rest.split_whitespace().next()?.parse().ok()
}

/// N of the plugin's first "osmroute: ENGINE: routed ... with N VL(s)".
fn plugin_vls(log: &str) -> Option<u8> {
    let line = log
        .lines()
        .find(|l| l.contains("osmroute: ") && l.contains(" routed ") && l.contains(" VL(s) in "))?;
    let before = &line[..line.find(" VL(s) in ")?];
    before.rsplit(' ').next()?.parse().ok()
}

/// Seconds since midnight of a log line (`Nov 23 07:47:24 800453 [...] ...`).
fn timestamp(line: &str) -> Option<f64> {
    let mut words = line.split_whitespace().skip(2);
    let clock = words.next()?;
    let micros: f64 = words.next()?.parse().ok()?;
    let mut hms = clock.split(':').map(|x| x.parse::<f64>());
    let (h, m, s) = (hms.next()?.ok()?, hms.next()?.ok()?, hms.next()?.ok()?);
    Some(h * 3600.0 + m * 60.0 + s + micros / 1e6)
}

/// The first routing pass in `log`.
pub fn first_routing_pass(log: &str) -> RoutingPass {
    let configured = log
        .lines()
        .find(|l| l.contains(" tables configured on all switches"));
    let engine = configured.and_then(|l| {
        let before = &l[..l.find(" tables configured")?];
        before.rsplit([' ', ':']).next().map(str::to_string)
    });
    let start = log
        .lines()
        .find(|l| l.contains("building routing with"))
        .and_then(timestamp);
    let end = configured.and_then(timestamp);
    let seconds = match (start, end) {
        // Past midnight the clock starts again.
        (Some(a), Some(b)) => Some(if b >= a { b - a } else { b + 86_400.0 - a }),
        _ => None,
    };
    let vls_needed = plugin_vls(log)
        .or_else(|| number_after(log, "Virtual Lanes needed: "))
        .or_else(|| number_after(log, "deadlock removal needed "));
    RoutingPass {
        engine,
        seconds,
        vls_needed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_engine_and_interval() {
        let log = "Nov 23 07:47:23 500000 [81C6A6C0] 0x02 -> osm_ucast_mgr_process: building routing with 'minhop' routing algorithm...\n\
                   Nov 23 07:47:24 800453 [81C6A6C0] 0x02 -> osm_ucast_mgr_process: minhop tables configured on all switches\n";
        let pass = first_routing_pass(log);
        assert_eq!(pass.engine.as_deref(), Some("minhop"));
        assert!((pass.seconds.unwrap() - 1.300453).abs() < 1e-6);
        let no_verbose = first_routing_pass(log.lines().nth(1).unwrap());
        assert_eq!(
            no_verbose,
            RoutingPass {
                engine: Some("minhop".into()),
                ..RoutingPass::default()
            }
        );
        assert_eq!(first_routing_pass(""), RoutingPass::default());
    }

    #[test]
    fn reads_the_vls_an_engine_needed() {
        let dfsssp = "x 0x02 -> dfsssp_remove_deadlocks: Virtual Lanes needed: 4\n";
        assert_eq!(first_routing_pass(dfsssp).vls_needed, Some(4));
        let pssp = "x 0x02 -> osmroute: pssp: deadlock removal needed 3 virtual layers, paths spread over 8\n";
        assert_eq!(first_routing_pass(pssp).vls_needed, Some(3));
        let hop = "x 0x02 -> osmroute: layered: hop-position deadlock removal needed 3 VLs (one per hop class), spread over 8\n";
        assert_eq!(first_routing_pass(hop).vls_needed, Some(3));
        // The plugin's own count wins: mlid's layers (2) and the VL it
        // keeps for multicast.
        let mlid = "x 0x02 -> osmroute: mlid: deadlock removal needed 2 virtual layers, paths spread over 2; the multicast tree's turns are in layers []\n\
                    x 0x02 -> osmroute: mlid: routed 60 switches and 408 LIDs with 3 VL(s) in 18.3 ms (snapshot 0.8 ms)\n";
        assert_eq!(first_routing_pass(mlid).vls_needed, Some(3));
    }

    #[test]
    fn survives_midnight() {
        let log = "Nov 23 23:59:59 900000 [1] 0x02 -> building routing with 'dla'\nNov 24 00:00:00 100000 [1] 0x02 -> x: dla tables configured on all switches\n";
        assert!((first_routing_pass(log).seconds.unwrap() - 0.2).abs() < 1e-6);
    }
}
