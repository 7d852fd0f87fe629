//! Running ibsim and the distribution's OpenSM for integration tests.
//!
//! Facts this relies on (checked on Debian bookworm's packages):
//! - `ibsim -s -n NETFILE` simulates the fabric without a console (without
//!   `-n` it reads console commands such as `unlink "NAME"[PORT]` on
//!   stdin, kept open here as a pipe); it prints
//!   its limits (`MaxMcastCap ...`) once the fabric is parsed and its socket
//!   is up. `IBSIM_SOCKNAME` gives every simulation its own socket, so tests
//!   run in parallel. `-N/-S/-P` raise its node, switch and port limits.
//! - Any libibumad program (opensm, ibroute, smpquery, ibswitches) talks to
//!   the simulation when run with `LD_PRELOAD=libumad2sim.so` and the same
//!   `IBSIM_SOCKNAME`.
//! - ibsim numbers GUIDs in file order: switches 0x200000 + n, HCAs from
//!   0x100000 with one GUID for the node and one per port (port GUID = node
//!   GUID + port); `io::netfile::read` does the same, so a fabric read from the net file names nodes as the
//!   simulation does.
//! - umad2sim creates a fake sysfs tree `sys-PID/` in the working directory
//!   of every program it is preloaded into: run them in the run directory.
//! - OpenSM reads `event_plugin_name` only from its config file (`-F`), keeps
//!   its cache (guid2lid, neighbors) in `$OSM_CACHE_DIR` (default
//!   /var/cache/opensm, which stale state from other runs would pollute),
//!   and buffers its log unless `force_log_flush TRUE`.
//!
//! Everything a test starts is killed when its handle drops, also when the
//! test panics; the run directory is then kept and its path printed.

#![allow(dead_code)]

pub mod live;
pub mod multicast;
pub mod offline;
pub mod readback;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub const UMAD2SIM: &str = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";

static RUNS: AtomicUsize = AtomicUsize::new(0);

/// Directory holding target/<profile>/libosmroute.so and the `osmroute`
/// binary built with the same profile as this test.
pub fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test binary>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf();
    assert!(
        dir.join("libosmroute.so").exists(),
        "{} has no libosmroute.so: build the plugin first (`cargo build --release --workspace`, as .ci/test does)",
        dir.display()
    );
    dir
}

/// `osmroute ARGS...` (the binary built with these tests): whether it
/// succeeded, and its standard output.
pub fn osmroute(args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(build_dir().join("osmroute"))
        .args(args)
        .output()
        .expect("run osmroute");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `osmroute ARGS...` as a user sees it: its exit code (-1 if killed by a
/// signal) and everything it printed, standard output then standard error.
pub fn osmroute_seen(args: &[&str]) -> (i32, String) {
    let out = Command::new(build_dir().join("osmroute"))
        .args(args)
        .output()
        .expect("run osmroute");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

/// The first number on the line of `report` that starts with `prefix`
/// (a figure of `osmroute check`'s report, e.g. its EBB).
pub fn first_number_after(report: &str, prefix: &str) -> f64 {
    let line = report
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starts with {prefix:?}: {report}"));
    line.split_whitespace()
        .find_map(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number on {line:?}"))
}

/// How long OpenSM may take to route the fabric of net file `net`: two
/// minutes plus a second per 50 lines (discovery grows with the fabric).
pub fn timeout_for(net: &str) -> Duration {
    Duration::from_secs(120 + net.lines().count() as u64 / 50)
}

/// `osmroute check DIR ARGS...`, which must deliver every route and find
/// no credit loop; returns its report.
pub fn check_loop_free(dir: &Path, args: &[&str]) -> String {
    let dir = dir.to_str().expect("UTF-8 path");
    let (ok, report) = osmroute(&[&["check", dir][..], args].concat());
    assert!(
        ok && report.contains("credit loops: none"),
        "osmroute check {dir}: {report}"
    );
    report
}

/// `osmroute gen FAMILY... --shuffle-ports --seed SEED` as net-file text:
/// port numbers that carry no structure, so engines must read the graph.
pub fn generate_shuffled(family: &[&str], seed: u64) -> String {
    let out = std::process::Command::new(build_dir().join("osmroute"))
        .arg("gen")
        .args(family)
        .args(["--shuffle-ports", "--seed", &seed.to_string()])
        .output()
        .expect("run osmroute gen");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("net file text")
}

fn require(binary: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(binary).exists()))
        .unwrap_or(false)
        || Path::new("/usr/sbin").join(binary).exists();
    assert!(
        found,
        "`{binary}` not found: install {package} (.ci/deps does)"
    );
}

fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) -> Result<(), String> {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > timeout {
            return Err(format!("timed out after {timeout:?} waiting for {what}"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}

/// One ibsim simulation of a net file.
pub struct Sim {
    pub dir: PathBuf,
    pub netfile: PathBuf,
    sock: String,
    ibsim: Child,
    /// ibsim's console (`start_live`).
    console: Option<std::process::ChildStdin>,
    opensm_runs: usize,
}

impl Sim {
    /// Writes `net` into a fresh run directory and simulates it.
    pub fn start(name: &str, net: &str) -> Sim {
        Self::spawn(name, net, false)
    }

    /// `start` with ibsim's console open, for faults while OpenSM runs
    /// (`console`).
    pub fn start_live(name: &str, net: &str) -> Sim {
        Self::spawn(name, net, true)
    }

    /// Sends one console command to ibsim, e.g. `unlink "NAME"[PORT]`.
    pub fn console(&mut self, command: &str) {
        use std::io::Write;
        let console = self
            .console
            .as_mut()
            .expect("the simulation was started with start_live");
        writeln!(console, "{command}")
            .and_then(|()| console.flush())
            .expect("write to ibsim's console");
    }

    fn spawn(name: &str, net: &str, live: bool) -> Sim {
        require("ibsim", "ibsim-utils");
        assert!(
            Path::new(UMAD2SIM).exists(),
            "{UMAD2SIM} missing: install libumad2sim0"
        );
        let run = RUNS.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("osmroute-test-{name}-{}-{run}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create run directory");
        let netfile = dir.join("fabric.net");
        std::fs::write(&netfile, net).expect("write net file");
        let nodes = net
            .lines()
            .filter(|l| l.starts_with("Switch") || l.starts_with("Hca"))
            .count();
        let switches = net.lines().filter(|l| l.starts_with("Switch")).count();
        // Every port a node has, cabled or not (ibsim allocates them all):
        // "Switch 36 ..." has 37 with port 0.
        let ports: usize = net
            .lines()
            .filter(|l| l.starts_with("Switch") || l.starts_with("Hca"))
            .map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|n| n.parse::<usize>().ok())
                    .unwrap_or(0)
                    + 1
            })
            .sum();
        let sock = format!("osmroute-{name}-{}-{run}", std::process::id());
        let log = std::fs::File::create(dir.join("ibsim.log")).expect("ibsim log");
        let mut ibsim = Command::new("ibsim")
            .arg("-s")
            .args(if live { &[][..] } else { &["-n"][..] })
            .args([
                "-N",
                &(nodes + 16).to_string(),
                "-S",
                &(switches + 16).to_string(),
                "-P",
                &(ports + 64).to_string(),
            ])
            .arg(&netfile)
            .env("IBSIM_SOCKNAME", &sock)
            .stdin(if live { Stdio::piped() } else { Stdio::null() })
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .expect("start ibsim");
        let console = ibsim.stdin.take();
        let sim = Sim {
            dir,
            netfile,
            sock,
            ibsim,
            console,
            opensm_runs: 0,
        };
        let log_path = sim.dir.join("ibsim.log");
        wait_until(
            "ibsim to parse the fabric",
            Duration::from_secs(300),
            || std::fs::read_to_string(&log_path).is_ok_and(|l| l.contains("MaxMcastCap")),
        )
        .unwrap_or_else(|e| {
            panic!(
                "{e}; ibsim log: {}",
                std::fs::read_to_string(&log_path).unwrap_or_default()
            )
        });
        sim
    }

    /// Starts OpenSM with the plugin and `conf` lines added to a config that
    /// logs to the run directory and writes its dumps there.
    pub fn opensm(&mut self, conf: &[&str], env: &[(&str, &str)]) -> OpenSm {
        require("opensm", "opensm");
        self.opensm_from(Path::new("opensm"), conf, env)
    }

    /// The cache directory (OSM_CACHE_DIR) the next OpenSM started here
    /// will use, created, so a test can put a guid2lid file there first.
    pub fn next_cache_dir(&self) -> PathBuf {
        let dir = self
            .dir
            .join(format!("opensm-{}", self.opensm_runs + 1))
            .join("cache");
        std::fs::create_dir_all(&dir).expect("opensm cache directory");
        dir
    }

    /// `opensm` with another OpenSM executable (e.g. opensm-patch's build).
    pub fn opensm_from(&mut self, binary: &Path, conf: &[&str], env: &[(&str, &str)]) -> OpenSm {
        self.opensm_runs += 1;
        let dir = self.dir.join(format!("opensm-{}", self.opensm_runs));
        std::fs::create_dir_all(dir.join("cache")).expect("opensm run directory");
        let mut text = format!(
            "log_file {dir}/opensm.log\nforce_log_flush TRUE\nlog_flags 0x43\ndump_files_dir {dir}\n\
             event_plugin_name osmroute\n",
            dir = dir.display()
        );
        for line in conf {
            text.push_str(line);
            text.push('\n');
        }
        let conf_path = dir.join("opensm.conf");
        std::fs::write(&conf_path, text).expect("write opensm.conf");
        // No host configuration leaks in unless a test asks for it: an
        // empty osmroute.conf (a file OSMROUTE_CONFIG names must exist).
        let no_options = dir.join("empty-osmroute.conf");
        std::fs::write(&no_options, "").expect("write an empty osmroute.conf");
        let out = std::fs::File::create(dir.join("opensm.out")).expect("opensm output");
        let mut cmd = Command::new(binary);
        // umad2sim leaves a fake sysfs tree (sys-PID/) in the working directory.
        cmd.current_dir(&dir)
            .arg("-F")
            .arg(&conf_path)
            .env("IBSIM_SOCKNAME", &self.sock)
            .env("LD_PRELOAD", UMAD2SIM)
            .env("LD_LIBRARY_PATH", build_dir())
            .env("OSM_CACHE_DIR", dir.join("cache"))
            .env("OSMROUTE_CONFIG", &no_options)
            .stdin(Stdio::null())
            .stdout(out.try_clone().expect("output handle"))
            .stderr(out);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("start opensm");
        OpenSm { dir, child }
    }

    /// `opensm` with an osmroute configuration file holding `osmroute_conf`
    /// (written into the run directory and named by OSMROUTE_CONFIG).
    pub fn opensm_configured(&mut self, conf: &[&str], osmroute_conf: &str) -> OpenSm {
        let path = self
            .dir
            .join(format!("osmroute-{}.conf", self.opensm_runs + 1));
        std::fs::write(&path, osmroute_conf).expect("write osmroute.conf");
        let path = path.display().to_string();
        self.opensm(conf, &[("OSMROUTE_CONFIG", &path)])
    }

    /// Runs a diag tool against the simulation; returns its standard output.
    pub fn tool(&self, cmd: &str, args: &[&str]) -> String {
        self.tool_with_input(cmd, args, "")
    }

    /// `tool` with `input` on its standard input.
    pub fn tool_with_input(&self, cmd: &str, args: &[&str], input: &str) -> String {
        use std::io::Write;
        let mut child = Command::new(cmd)
            .args(args)
            .current_dir(&self.dir)
            .env("IBSIM_SOCKNAME", &self.sock)
            .env("LD_PRELOAD", UMAD2SIM)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd}: {e} (install infiniband-diags)"));
        let mut stdin = child.stdin.take().expect("piped stdin");
        let input = input.to_string();
        // Written from another thread, so a tool that answers as it reads
        // cannot block on a full output pipe.
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("{cmd}: {e}"));
        writer
            .join()
            .expect("stdin writer")
            .unwrap_or_else(|e| panic!("{cmd} stdin: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.ibsim.kill();
        let _ = self.ibsim.wait();
        if std::thread::panicking() {
            eprintln!("test files kept in {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// One OpenSM process on a simulation.
pub struct OpenSm {
    pub dir: PathBuf,
    child: Child,
}

impl OpenSm {
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("opensm.log")).unwrap_or_default()
    }

    /// Waits until OpenSM's log contains `text` `times` times.
    pub fn wait_for_n(&self, text: &str, times: usize, timeout: Duration) {
        if let Err(e) = wait_until(text, timeout, || self.log().matches(text).count() >= times) {
            let log = self.log();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            panic!(
                "{e}; OpenSM output: {}\nlast log lines:\n{}",
                std::fs::read_to_string(self.dir.join("opensm.out")).unwrap_or_default(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
    }

    pub fn wait_for(&self, text: &str, timeout: Duration) {
        self.wait_for_n(text, 1, timeout)
    }

    /// OpenSM's log has no ERR line.
    pub fn assert_no_errors(&self) {
        let errors = self.lines_with("ERR");
        assert!(errors.is_empty(), "ERR lines in OpenSM's log: {errors:#?}");
    }

    /// Lines of the log containing `text`.
    pub fn lines_with(&self, text: &str) -> Vec<String> {
        self.log()
            .lines()
            .filter(|l| l.contains(text))
            .map(str::to_string)
            .collect()
    }

    /// Asks OpenSM for a heavy re-sweep (what SIGHUP does).
    pub fn resweep(&self) {
        let status = Command::new("kill")
            .arg("-HUP")
            .arg(self.child.id().to_string())
            .status();
        assert!(status.is_ok_and(|s| s.success()), "cannot signal OpenSM");
    }

    /// OpenSM's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// OpenSM's resident memory (VmRSS) in kB.
    pub fn resident_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("OpenSM is running");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("a VmRSS line")
    }

    pub fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }
}

impl Drop for OpenSm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
