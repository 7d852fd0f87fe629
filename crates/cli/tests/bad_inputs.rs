//! Inputs that once crashed the toolkit or were quietly accepted (issue
//! 16): each must now give a clear error, or be handled with a warning
//! where routing does not need what is wrong. A panic would show as exit
//! status 101; a hang as the FIFO test's time-out.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::{generate, osmroute, path, scratch, text};

/// `net` with two more ports on `switch`, cabled to each other: a cable
/// from the switch to itself (a miscabling seen in real fabrics).
fn with_self_cable(net: &str, switch: &str) -> String {
    let header = format!("\"{switch}\"");
    let mut out = String::new();
    for line in net.lines() {
        let words: Vec<&str> = line.splitn(3, ' ').collect();
        if words.len() == 3 && words[0] == "Switch" && words[2] == header {
            let ports: u8 = words[1].parse().expect("port count");
            let (a, b) = (ports + 1, ports + 2);
            out.push_str(&format!(
                "Switch {b} {header}\n[{a}] {header}[{b}]\n[{b}] {header}[{a}]\n"
            ));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(
        out.contains(&format!("{header}[")),
        "no switch {switch} in the net file"
    );
    out
}

/// Not a panic: a status, with the message on standard error.
fn assert_clean_exit(out: &Output, what: &str) {
    assert_ne!(
        out.status.code(),
        Some(101),
        "{what} panicked: {}",
        text(&out.stderr)
    );
    assert!(
        out.status.code().is_some(),
        "{what} was killed: {:?}",
        out.status
    );
}

/// A HyperX switch cabled to itself: hxdor's mapping panicked ("cabled");
/// the cable carries no route, so it is ignored with a warning and the
/// fabric routes as without it.
#[test]
fn a_self_cable_does_not_stop_hxdor() {
    let dir = scratch("hxdor-loop");
    let net = dir.join("hx.net");
    let hyperx = generate(&["hyperx", "--dims", "4,4", "--widths", "1,1", "--p", "1"]);
    let switch = hyperx
        .lines()
        .find_map(|l| l.strip_prefix("Switch "))
        .and_then(|l| l.split('"').nth(1))
        .expect("a switch");
    std::fs::write(&net, with_self_cable(&hyperx, switch)).unwrap();
    let routed = dir.join("routed");
    let out = osmroute(&[
        "route",
        "--engine",
        "hxdor",
        "--fabric",
        path(&net),
        "-o",
        path(&routed),
    ]);
    assert_clean_exit(&out, "route --engine hxdor");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("cabled to its own switch; the cable is ignored"),
        "{}",
        text(&out.stderr)
    );
    let out = osmroute(&["check", path(&routed)]);
    assert!(
        out.status.success() && text(&out.stdout).contains("credit loops: none"),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same miscabling on a Slim Fly made sfmin miss the MMS graph and
/// fall back to balanced minimal paths.
#[test]
fn a_self_cable_does_not_hide_a_slim_fly_from_sfmin() {
    let dir = scratch("sfmin-loop");
    let net = dir.join("sf.net");
    let slimfly = generate(&["slimfly", "--q", "5", "--p", "1"]);
    let switch = slimfly
        .lines()
        .find_map(|l| l.strip_prefix("Switch "))
        .and_then(|l| l.split('"').nth(1))
        .expect("a switch");
    std::fs::write(&net, with_self_cable(&slimfly, switch)).unwrap();
    let routed = dir.join("routed");
    let out = osmroute(&[
        "route",
        "--engine",
        "sfmin",
        "--fabric",
        path(&net),
        "-o",
        path(&routed),
    ]);
    assert_clean_exit(&out, "route --engine sfmin");
    let log = text(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("cabled to its own switch"), "{log}");
    assert!(
        log.contains("Slim Fly q = 5: MMS labels recovered"),
        "{log}"
    );
    let out = osmroute(&["check", path(&routed), "--max-hops", "2"]);
    assert!(
        out.status.success() && text(&out.stdout).contains("credit loops: none"),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A path-SL file with SL 16 made `check` index out of bounds.
#[test]
fn check_refuses_a_path_sl_of_16() {
    let dir = scratch("sl16");
    let net = dir.join("df.net");
    std::fs::write(
        &net,
        generate(&["dragonfly", "--a", "4", "--h", "2", "--p", "1"]),
    )
    .unwrap();
    let routed = dir.join("routed");
    let out = osmroute(&[
        "route",
        "--engine",
        "dla",
        "--fabric",
        path(&net),
        "-o",
        path(&routed),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = routed.join("osmroute-path-sl.txt");
    let sls = std::fs::read_to_string(&file).unwrap();
    let first = sls.lines().next().expect("a path-SL line");
    let (head, _) = first.rsplit_once(' ').expect("GUID DLID SL");
    std::fs::write(&file, sls.replacen(first, &format!("{head} 16"), 1)).unwrap();
    let out = osmroute(&["check", path(&routed)]);
    assert_clean_exit(&out, "check");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("SL 16 is out of range"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cable on port 255 (the tables' "no path") routed with exit 0 and
/// black holes.
#[test]
fn port_255_in_a_net_file_is_refused() {
    let dir = scratch("port255");
    let net = dir.join("big.net");
    std::fs::write(
        &net,
        "Hca 1 \"h0\"\n[1] \"s0\"[1]\n\nHca 1 \"h1\"\n[1] \"s0\"[255]\n\nSwitch 255 \"s0\"\n[1] \"h0\"[1]\n[255] \"h1\"[1]\n",
    )
    .unwrap();
    for engine in ["pssp", "sfmin"] {
        let out = osmroute(&[
            "route",
            "--engine",
            engine,
            "--fabric",
            path(&net),
            "-o",
            path(&dir.join(engine)),
        ]);
        assert_clean_exit(&out, "route");
        assert_eq!(
            out.status.code(),
            Some(2),
            "{engine}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("port 255"),
            "{}",
            text(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two CA ports with one port GUID in ibnetdiscover output were accepted.
#[test]
fn duplicate_port_guids_in_ibnetdiscover_output_are_refused() {
    let dir = scratch("dup-guid");
    let discovered = dir.join("fabric.ibnd");
    // h1's port GUID repeats h0's.
    let text_in = "switchguid=0x200000(200000)\n\
        Switch\t8 \"S-0000000000200000\"\t\t# \"s0\" base port 0 lid 1 lmc 0\n\
        [1]\t\"H-0000000000100000\"[1](100001) \t\t# \"h0\" lid 2 4xSDR\n\
        [2]\t\"H-0000000000100003\"[1](100001) \t\t# \"h1\" lid 3 4xSDR\n\n\
        caguid=0x100000\n\
        Ca\t1 \"H-0000000000100000\"\t\t# \"h0\"\n\
        [1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 2 lmc 0 \"s0\" lid 1 4xSDR\n\n\
        caguid=0x100003\n\
        Ca\t1 \"H-0000000000100003\"\t\t# \"h1\"\n\
        [1](100001) \t\"S-0000000000200000\"[2]\t\t# lid 3 lmc 0 \"s0\" lid 1 4xSDR\n";
    std::fs::write(&discovered, text_in).unwrap();
    let out = osmroute(&[
        "route",
        "--engine",
        "pssp",
        "--fabric",
        path(&discovered),
        "-o",
        path(&dir.join("out")),
    ]);
    assert_clean_exit(&out, "route");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("port GUID 0x0000000000100001") && err.contains("h1"),
        "{err}"
    );
    // The same file with distinct port GUIDs routes: the refusal is the
    // duplicate, not the format.
    std::fs::write(
        &discovered,
        text_in
            .replace(
                "[1](100001) \t\"S-0000000000200000\"[2]",
                "[1](100004) \t\"S-0000000000200000\"[2]",
            )
            .replace(
                "\"H-0000000000100003\"[1](100001)",
                "\"H-0000000000100003\"[1](100004)",
            ),
    )
    .unwrap();
    let out = osmroute(&[
        "route",
        "--engine",
        "pssp",
        "--fabric",
        path(&discovered),
        "-o",
        path(&dir.join("out")),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--config` naming a missing file silently meant the defaults; a key
/// set twice was taken; a FIFO blocked the command for ever.
#[test]
fn a_config_file_must_exist_be_regular_and_set_each_key_once() {
    let dir = scratch("config");
    let net = dir.join("df.net");
    std::fs::write(
        &net,
        generate(&["dragonfly", "--a", "4", "--h", "2", "--p", "1"]),
    )
    .unwrap();
    let route = |config: &Path| {
        osmroute(&[
            "route",
            "--engine",
            "dla",
            "--fabric",
            path(&net),
            "--config",
            path(config),
            "-o",
            path(&dir.join("out")),
        ])
    };
    let out = route(&dir.join("missing.conf"));
    assert_clean_exit(&out, "route --config missing");
    assert!(
        !out.status.success(),
        "a missing --config file was accepted: {}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("no such file"),
        "{}",
        text(&out.stderr)
    );

    let twice = dir.join("twice.conf");
    std::fs::write(&twice, "dla.sl 1\ndla.sl 2\n").unwrap();
    let out = route(&twice);
    assert!(
        !out.status.success(),
        "a key set twice was accepted: {}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("'dla.sl': is set twice (first on line 1)"),
        "{}",
        text(&out.stderr)
    );

    let once = dir.join("once.conf");
    std::fs::write(&once, "dla.sl 2\n").unwrap();
    assert!(route(&once).status.success());

    let fifo = dir.join("fifo.conf");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo failed");
    let mut child = Command::new(env!("CARGO_BIN_EXE_osmroute"))
        .args([
            "route",
            "--engine",
            "dla",
            "--fabric",
            path(&net),
            "--config",
            path(&fifo),
            "-o",
            path(&dir.join("out")),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run osmroute");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for osmroute") {
            break status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("osmroute route --config FIFO still blocked after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().expect("stderr"), &mut err).unwrap();
    assert!(
        !status.success() && status.code() != Some(101),
        "{status:?}: {err}"
    );
    assert!(err.contains("not a regular file"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
