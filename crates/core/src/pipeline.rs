//! One routing pass, as both hosts run it: the plugin inside OpenSM and
//! `osmroute route`. Configuration problems, the engine itself and the
//! VL-budget rule are decided here, once, so the two cannot disagree.

use crate::config::{ConfigError, Settings, DUMP_SECTION};
use crate::dumps::bundle::DumpOptions;
use crate::engines::{EngineInfo, Outcome};
use crate::error::{Decline, Error};
use crate::fabric::Fabric;
use crate::routing::Routing;

/// The first problem that makes `engine` decline: of the file as a whole,
/// of its own section (bad values, unknown keys) or of the `dump` section.
pub fn config_problem(engine: &EngineInfo, settings: &Settings) -> Option<ConfigError> {
    let own = settings
        .errors_for(engine.name)
        .chain(settings.errors_for(DUMP_SECTION))
        .next()
        .cloned();
    own.or_else(|| (engine.build)(&settings.section(engine.name)).err())
        .or_else(|| DumpOptions::read(&settings.section(DUMP_SECTION)).err())
}

/// Routes `fabric` with `engine` configured by `settings`, or says why
/// not. Every failure is the engine declining, so the message always
/// names it.
pub fn route(engine: &EngineInfo, settings: &Settings, fabric: &Fabric) -> Result<Outcome, Error> {
    let name = engine.name;
    if let Some(e) = config_problem(engine, settings) {
        return Err(Error::declined(
            name,
            Decline::Configuration,
            format!("configuration error: {e}"),
        ));
    }
    let configured = (engine.build)(&settings.section(name))
        .map_err(|e| Error::declined(name, Decline::Configuration, e.to_string()))?;
    let outcome = configured.route(fabric).map_err(|e| as_decline(name, e))?;
    check_vl_budget(name, fabric, &outcome.routing)?;
    Ok(outcome)
}

/// Every failure of a routing pass is the engine declining: say so, so the
/// message names the engine whatever went wrong.
fn as_decline(engine: &str, e: Error) -> Error {
    match e {
        Error::Declined { .. } => e,
        Error::Fabric(e) => Error::declined(engine, Decline::InvalidFabric, e.to_string()),
        other => Error::declined(engine, Decline::Configuration, other.to_string()),
    }
}

/// A routing that needs more VLs than the subnet programs would have
/// credit loops: decline instead, naming the setting to change.
fn check_vl_budget(engine: &str, fabric: &Fabric, routing: &Routing) -> Result<(), Error> {
    let vls = routing.vls_needed();
    let budget = fabric.vl_budget();
    if vls > 1 && !budget.sl2vl_programmed {
        return Err(Error::declined(
            engine,
            Decline::QosOff,
            format!(
                "this routing needs {vls} VLs for deadlock freedom, but OpenSM programs SL2VL tables only \
                 with QoS on; set `qos TRUE` in opensm.conf (without it the routing would have credit loops)"
            ),
        ));
    }
    if vls > budget.data_vls {
        return Err(Error::declined(
            engine,
            Decline::TooFewVls,
            format!("this routing needs {vls} VLs but {}", budget.limited_by),
        ));
    }
    Ok(())
}

/// `route` with every option at its default (tests, and tools that take
/// no configuration).
pub fn route_by_name(name: &str, fabric: &Fabric) -> Result<Outcome, Error> {
    route(crate::engines::find(name)?, &Settings::defaults(), fabric)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::VlBudget;

    fn dragonfly(budget: VlBudget) -> Fabric {
        let b =
            crate::gen::dragonfly::dragonfly(&crate::gen::dragonfly::Params::new(4, 2, 1)).unwrap();
        crate::testkit::TestFabric::of(b).budget(budget).build()
    }

    #[test]
    fn the_vl_budget_decides_for_every_host() {
        let dla = crate::engines::find("dla").unwrap();
        let defaults = Settings::defaults();
        assert!(route(dla, &defaults, &dragonfly(VlBudget::default())).is_ok());
        let no_qos = VlBudget {
            sl2vl_programmed: false,
            ..VlBudget::default()
        };
        let e = route(dla, &defaults, &dragonfly(no_qos)).unwrap_err();
        assert_eq!(e.decline(), Some(Decline::QosOff), "{e}");
        assert!(e.to_string().contains("set `qos TRUE`"), "{e}");
        let one = VlBudget {
            data_vls: 1,
            limited_by: "`max_op_vls 1` allows 1".into(),
            ..VlBudget::default()
        };
        let e = route(dla, &defaults, &dragonfly(one)).unwrap_err();
        assert_eq!(e.decline(), Some(Decline::TooFewVls), "{e}");
        assert!(e.to_string().contains("`max_op_vls 1` allows 1"), "{e}");
    }

    #[test]
    fn configuration_problems_decline_the_engines_they_concern() {
        let sections = crate::engines::config_sections();
        let f = dragonfly(VlBudget::default());
        let (dla, pssp) = (
            crate::engines::find("dla").unwrap(),
            crate::engines::find("pssp").unwrap(),
        );
        let bad_dla = Settings::parse("dla.sl 16\n", "/etc/o.conf", &sections);
        let e = route(dla, &bad_dla, &f).unwrap_err();
        assert_eq!(e.decline(), Some(Decline::Configuration), "{e}");
        let e = e.to_string();
        assert!(e.contains("/etc/o.conf:1") && e.contains("'dla.sl'"), "{e}");
        assert!(
            route(pssp, &bad_dla, &f).is_ok(),
            "another engine's key is not pssp's problem"
        );
        let bad_dump = Settings::parse("dump.max_path_sl_lines lots\n", "/etc/o.conf", &sections);
        assert!(route(dla, &bad_dump, &f).is_err() && route(pssp, &bad_dump, &f).is_err());
        let unknown = Settings::parse("dla.colour red\n", "/etc/o.conf", &sections);
        assert!(route(dla, &unknown, &f)
            .unwrap_err()
            .to_string()
            .contains("unknown key"));
    }
}
