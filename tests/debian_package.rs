//! The Debian package `.ci/deb` builds: what it holds, what it depends
//! on, and that its plugin is the one OpenSM will load. (The Docker
//! scenario installs it with apt and routes with it.)

mod harness;

use std::path::Path;
use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_package_holds_plugin_cli_docs_and_conffile() {
    let build = harness::build_dir();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("osmroute-deb-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let printed = run(
        root.join(".ci/deb").to_str().unwrap(),
        &[out.to_str().unwrap()],
    );
    let deb = printed.lines().last().expect("the .deb's path").to_string();
    assert!(
        deb.ends_with("_amd64.deb") || deb.ends_with(".deb"),
        "{deb}"
    );

    // Depends on the OpenSM whose headers it was built with, any revision.
    let headers = run("dpkg-query", &["-W", "-f=${Version}", "libopensm-dev"]);
    let upstream = headers
        .split(':')
        .next_back()
        .unwrap()
        .rsplit_once('-')
        .map_or(headers.as_str(), |(u, _)| u);
    let depends = run("dpkg-deb", &["-f", &deb, "Depends"]);
    assert!(
        depends.contains(&format!("opensm (>= {upstream}), opensm (<< {upstream}.~)")),
        "{depends}"
    );

    let listing = run("dpkg-deb", &["-c", &deb]);
    for path in [
        "./usr/lib/x86_64-linux-gnu/libosmroute.so",
        "./usr/bin/osmroute",
        "./usr/share/man/man1/osmroute.1.gz",
        "./usr/share/man/man1/osmroute-doctor.1.gz",
        "./usr/share/man/man1/osmroute-check.1.gz",
        "./usr/share/bash-completion/completions/osmroute",
        "./usr/share/zsh/vendor-completions/_osmroute",
        "./usr/share/fish/vendor_completions.d/osmroute.fish",
        "./usr/share/doc/osmroute/README.md.gz",
        "./usr/share/doc/osmroute/docs/engines/dla.md.gz",
        "./usr/share/doc/osmroute/copyright",
        "./etc/opensm/osmroute.conf",
    ] {
        assert!(
            listing.lines().any(|l| l.ends_with(path)),
            "the package lacks {path}:\n{listing}"
        );
    }
    let control = out.join("control");
    run("dpkg-deb", &["-e", &deb, control.to_str().unwrap()]);
    let conffiles = std::fs::read_to_string(control.join("conffiles")).unwrap();
    assert_eq!(conffiles.trim(), "/etc/opensm/osmroute.conf");
    assert!(std::fs::read_to_string(control.join("triggers"))
        .unwrap()
        .contains("ldconfig"));

    let files = out.join("files");
    run("dpkg-deb", &["-x", &deb, files.to_str().unwrap()]);
    // The conffile is the example the CLI prints: every option, commented.
    let example = run(
        build.join("osmroute").to_str().unwrap(),
        &["example-config"],
    );
    assert_eq!(
        std::fs::read_to_string(files.join("etc/opensm/osmroute.conf")).unwrap(),
        example
    );
    // The plugin is named for the loader's cache and built for this OpenSM.
    let plugin = files.join("usr/lib/x86_64-linux-gnu/libosmroute.so");
    let dynamic = run("readelf", &["-d", plugin.to_str().unwrap()]);
    assert!(
        dynamic.contains("Library soname: [libosmroute.so]"),
        "{dynamic}"
    );
    let conf = out.join("opensm.conf");
    std::fs::write(
        &conf,
        "event_plugin_name osmroute\nrouting_engine dla,pssp,nue\nqos TRUE\n",
    )
    .unwrap();
    let doctor = Command::new(files.join("usr/bin/osmroute"))
        .args([
            "doctor",
            "--opensm-conf",
            conf.to_str().unwrap(),
            "--plugin",
            plugin.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("as the installed OpenSM"), "{report}");
    let _ = std::fs::remove_dir_all(&out);
}
