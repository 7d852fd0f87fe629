//! `osmroute compare DIR...` (issue #3): not built yet.

#[derive(clap::Args)]
pub struct Args {
    dirs: Vec<std::path::PathBuf>,
}

pub fn run(_args: Args) -> crate::CmdResult {
    Err("`osmroute compare` is not available yet; run `osmroute check` on each directory".into())
}
