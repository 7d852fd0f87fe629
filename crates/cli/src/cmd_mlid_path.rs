//! `osmroute mlid-path --fabric F --from A --to B`: which destination LID
//! host A should use towards host B under mlid's path selection (§4.2 of
//! the MLID paper), and the path it gets.

use std::process::ExitCode;

use osmroute_core::engines::mlid;
use osmroute_core::fabric::{describe, Lid, PortRef};
use osmroute_core::routing::walk::trace;
use osmroute_core::Fabric;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    fabric: crate::load::FabricArgs,
    /// Source host: base LID, port or node GUID (0x...), or node name.
    #[arg(long)]
    from: String,
    /// Destination host, the same ways.
    #[arg(long)]
    to: String,
}

/// The CA port `who` names.
fn host_port(fabric: &Fabric, who: &str) -> Result<(PortRef, Lid, u32), String> {
    let guid = who
        .strip_prefix("0x")
        .and_then(|h| u64::from_str_radix(h, 16).ok());
    let lid: Option<Lid> = who.parse().ok().map(Lid::from_raw);
    fabric
        .end_ports()
        .filter(|(at, _)| !fabric.node(at.node).is_switch())
        .find(|(at, p)| {
            let node = fabric.node(at.node);
            Some(p.lid) == lid
                || guid.is_some_and(|g| g == p.guid || g == node.guid)
                || node.desc == who
        })
        .map(|(at, p)| (at, p.lid, p.lid_count()))
        .ok_or_else(|| format!("no host port with base LID, GUID or name '{who}'"))
}

pub fn run(args: Args) -> crate::CmdResult {
    let fabric = args.fabric.load()?;
    let tree = mlid::tree_of(&fabric)?;
    let (src, slid, _) = host_port(&fabric, &args.from)?;
    let (dst, dbase, count) = host_port(&fabric, &args.to)?;
    // The host's place in the d-mod-k order (its up digits, lowest first).
    let label = |at: PortRef| match tree.host_index.get(&at) {
        Some(&i) => format!("host {i}, digits {:?}", tree.digits(i)),
        None => "not a host of the tree".to_string(),
    };
    let choice = mlid::path_selection(&fabric)?;
    let dlid = choice.get(slid, dbase).unwrap_or(dbase);
    let offset = dlid.raw() - dbase.raw();
    println!(
        "{} ({}) LID {slid} -> {} ({}) base LID {dbase}: use DLID {dlid} (offset {offset} of {count})",
        describe(fabric.node(src.node)),
        label(src),
        describe(fabric.node(dst.node)),
        label(dst)
    );
    let routing = mlid::route(&fabric, &mlid::MlidOptions::default())?;
    let hops = trace(&fabric, &routing.lfts, src, dlid).map_err(|e| e.to_string())?;
    let names: Vec<String> = hops
        .iter()
        .map(|h| fabric.switch_node(h.switch).desc.clone())
        .collect();
    println!("path: {}", names.join(" -> "));
    Ok(ExitCode::SUCCESS)
}
