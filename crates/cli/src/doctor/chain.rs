//! What each engine of a `routing_engine` chain does when the ones before
//! it decline, and whether the chain can end in tables with credit loops.
//! OpenSM tries the engines in order and, when every one fails, routes
//! with minhop.

/// How an engine behaves, for the question "is it a safe place for the
/// chain to end?".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One of ours: deadlock-free when it routes, declines otherwise.
    Osmroute,
    /// Routes any connected fabric without credit loops (nue: with the VLs
    /// there are, even one).
    AlwaysSafe,
    /// Deadlock-free on any topology by spreading paths over VLs; fails
    /// without `qos TRUE` or when the VLs run out (dfsssp, lash).
    SafeWithVls,
    /// Up*/down*: deadlock-free, but finds its roots by itself only in
    /// trees; elsewhere it needs `root_guid_file`.
    UpDown,
    /// ftree: fat trees only, and never with `lmc` > 0.
    FatTreeOnly,
    /// torus-2QoS: tori and meshes only.
    TorusOnly,
    /// Routes anything but has credit loops on most topologies that are
    /// not trees (minhop, sssp; dor off meshes and hypercubes).
    MayLoop,
    /// A name neither OpenSM 3.3 nor osmroute knows.
    Unknown,
}

pub fn kind(name: &str) -> Kind {
    if osmroute_core::engines::find(name).is_ok() {
        return Kind::Osmroute;
    }
    match name {
        "nue" => Kind::AlwaysSafe,
        "dfsssp" | "lash" => Kind::SafeWithVls,
        "updn" | "dnup" => Kind::UpDown,
        "ftree" => Kind::FatTreeOnly,
        "torus-2QoS" => Kind::TorusOnly,
        "minhop" | "sssp" | "dor" | "file" => Kind::MayLoop,
        _ => Kind::Unknown,
    }
}

/// What the doctor knows about the fabric the chain will route.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    pub lmc: u8,
    pub root_guid_file: bool,
    /// `Some(true)` when a fabric was given and it is a fat tree (minimal
    /// paths are then up*/down* paths, so minhop and updn are safe).
    pub fat_tree: Option<bool>,
}

/// Whether the chain ends safely: the first engine that certainly routes
/// this fabric without credit loops, if any. Our engines may decline, so
/// they never end a chain: pssp can run out of VLs.
pub fn safe_end(chain: &[String], ctx: &Context) -> Option<usize> {
    chain.iter().position(|name| match kind(name) {
        Kind::AlwaysSafe => true,
        Kind::UpDown => ctx.root_guid_file || ctx.fat_tree == Some(true),
        Kind::FatTreeOnly => ctx.fat_tree == Some(true) && ctx.lmc == 0,
        Kind::MayLoop => ctx.fat_tree == Some(true) && name == "minhop",
        Kind::Osmroute | Kind::SafeWithVls | Kind::TorusOnly | Kind::Unknown => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(s: &str) -> Vec<String> {
        s.split(',').map(str::to_string).collect()
    }

    #[test]
    fn a_chain_ends_safely_only_where_an_engine_cannot_fail_or_loop() {
        let mesh = Context::default();
        assert_eq!(
            safe_end(&chain("dla,pssp"), &mesh),
            None,
            "pssp may run out of VLs"
        );
        assert_eq!(safe_end(&chain("dla,pssp,nue"), &mesh), Some(2));
        assert_eq!(safe_end(&chain("dla,minhop"), &mesh), None);
        assert_eq!(
            safe_end(&chain("dla,updn"), &mesh),
            None,
            "no roots off trees"
        );
        let rooted = Context {
            root_guid_file: true,
            ..mesh
        };
        assert_eq!(safe_end(&chain("dla,updn"), &rooted), Some(1));
        let tree = Context {
            fat_tree: Some(true),
            ..mesh
        };
        assert_eq!(safe_end(&chain("mlid,ftree"), &tree), Some(1));
        assert_eq!(
            safe_end(&chain("mlid,ftree"), &Context { lmc: 2, ..tree }),
            None,
            "ftree refuses lmc > 0"
        );
        assert_eq!(
            safe_end(&chain("mlid,updn"), &Context { lmc: 2, ..tree }),
            Some(1)
        );
        assert_eq!(kind("dla"), Kind::Osmroute);
        assert_eq!(kind("no-such"), Kind::Unknown);
    }
}
