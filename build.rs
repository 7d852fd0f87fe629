//! Generates Rust bindings for the installed OpenSM headers (libopensm-dev)
//! and compiles the C shim for OpenSM's inline functions and macros.
//!
//! Struct layouts of OpenSM depend on its configure flags (osm_config.h), so
//! they always come from the headers on the build machine, never by hand.

use std::env;
use std::path::{Path, PathBuf};

const HEADER_ROOTS: &[&str] = &["/usr/include/infiniband", "/usr/local/include/infiniband"];

fn main() {
    println!("cargo:rerun-if-changed=include/osmroute_shim.h");
    println!("cargo:rerun-if-changed=src/shim/osmroute_shim.c");
    println!("cargo:rerun-if-env-changed=OSMROUTE_OPENSM_INCLUDE");
    // OpenSM dlopen()s the plugin by this name; with it as the SONAME,
    // ldconfig files it under that name in the loader's cache.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libosmroute.so");
    // The plugin's worker threads live as long as OpenSM (core::parallel);
    // OpenSM dlclose()s event plugins when it exits, and unmapping code
    // those threads still sit in would crash it on the way out.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");

    let include_root = env::var("OSMROUTE_OPENSM_INCLUDE")
        .map(PathBuf::from)
        .ok()
        .or_else(|| {
            HEADER_ROOTS
                .iter()
                .map(PathBuf::from)
                .find(|p| p.join("opensm/osm_opensm.h").exists())
        });
    let Some(include_root) = include_root else {
        eprintln!(
            "error: OpenSM headers not found (looked for opensm/osm_opensm.h under {}).\n\
             Install them with `apt-get install libopensm-dev`, or set OSMROUTE_OPENSM_INCLUDE \
             to the directory that contains opensm/ and complib/.",
            HEADER_ROOTS.join(", ")
        );
        std::process::exit(1);
    };
    println!(
        "cargo:rerun-if-changed={}",
        include_root.join("opensm/osm_version.h").display()
    );

    cc::Build::new()
        .file("src/shim/osmroute_shim.c")
        .include("include")
        .include(&include_root)
        .warnings(true)
        .compile("osmroute_shim");

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    generate_bindings(&include_root, &out.join("opensm_bindings.rs"));
}

fn generate_bindings(include_root: &Path, out: &Path) {
    let bindings = bindgen::Builder::default()
        .header("include/osmroute_shim.h")
        .clang_arg(format!("-I{}", include_root.display()))
        .clang_arg("-Iinclude")
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        // Only what the plugin uses; everything reachable from these is
        // pulled in as well.
        .allowlist_type("osm_opensm_t")
        .allowlist_type("osm_event_plugin_t")
        .allowlist_type("osm_routing_engine")
        .allowlist_type("external_routing_engine_module_t")
        .allowlist_type("osm_physp_t")
        .allowlist_type("ib_slvl_table_t")
        .allowlist_function("osm_register_external_routing_engine")
        .allowlist_function("osm_switch_set_hops")
        .allowlist_function("osmroute_.*")
        .allowlist_var("OSM_VERSION")
        .allowlist_var("OSM_LOG_.*")
        .allowlist_var("IB_NODE_TYPE_.*")
        .allowlist_var("IB_LINK_.*")
        .allowlist_var("OSM_NO_PATH")
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .generate();
    match bindings {
        Ok(b) => {
            if let Err(e) = b.write_to_file(out) {
                eprintln!("error: cannot write bindings to {}: {e}", out.display());
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!(
                "error: bindgen could not process the OpenSM headers under {}: {e}\n\
                 bindgen needs libclang: `apt-get install libclang-dev`.",
                include_root.display()
            );
            std::process::exit(1);
        }
    }
}
