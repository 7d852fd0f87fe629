//! What the Debian package installs beside the binaries, generated from
//! the command-line definitions and the engines' options so it cannot fall
//! behind them: man pages (osmroute(1) and one per subcommand), shell
//! completions, and the commented example osmroute.conf.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::CommandFactory;

#[derive(clap::Args)]
pub struct Args {
    /// Directory to write man/, completions/ and osmroute.conf into.
    #[arg(long)]
    out: PathBuf,
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn man_page(cmd: &clap::Command, name: &str, dir: &Path) -> Result<(), String> {
    let mut page = Vec::new();
    let cmd = cmd.clone().display_name(name.to_string());
    clap_mangen::Man::new(cmd)
        .render(&mut page)
        .map_err(|e| e.to_string())?;
    write(&dir.join(format!("{name}.1")), &page)
}

pub fn run(args: Args) -> crate::CmdResult {
    let mut cli = crate::Cli::command();
    cli.build();
    let man = args.out.join("man");
    man_page(&cli, "osmroute", &man)?;
    for sub in cli
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        man_page(sub, &format!("osmroute-{}", sub.get_name()), &man)?;
    }
    let completions = args.out.join("completions");
    for (shell, file) in [
        (clap_complete::Shell::Bash, "osmroute"),
        (clap_complete::Shell::Zsh, "_osmroute"),
        (clap_complete::Shell::Fish, "osmroute.fish"),
    ] {
        let mut text = Vec::new();
        clap_complete::generate(shell, &mut cli.clone(), "osmroute", &mut text);
        write(&completions.join(file), &text)?;
    }
    write(
        &args.out.join("osmroute.conf"),
        osmroute_core::engines::example_configuration().as_bytes(),
    )?;
    Ok(ExitCode::SUCCESS)
}
