//! `osmroute compare` (not implemented yet).

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> crate::CmdResult {
    Err("'osmroute compare' is not implemented yet".into())
}
