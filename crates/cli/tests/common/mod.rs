//! What every test of the `osmroute` command needs: running it, a scratch
//! directory, and its output as text. One copy, shared by the CLI's test
//! files (`mod common;`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `osmroute ARGS...`, the binary cargo built for these tests.
pub fn osmroute(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_osmroute"))
        .args(args)
        .output()
        .expect("run osmroute")
}

/// An exit code and everything `osmroute` printed (standard output, then
/// standard error), for tests that judge what a user sees.
pub struct Run {
    pub code: Option<i32>,
    pub out: String,
}

/// `osmroute ARGS...` as a user sees it.
pub fn run(args: &[&str]) -> Run {
    let o = osmroute(args);
    Run {
        code: o.status.code(),
        out: text(&o.stdout) + &text(&o.stderr),
    }
}

/// A fresh, empty directory for one test (`name` makes it the test's own).
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("osmroute-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `osmroute gen ARGS` as net-file text.
pub fn generate(args: &[&str]) -> String {
    let out = osmroute(&[&["gen"][..], args].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}
