use super::*;

#[test]
fn defaults_are_what_the_options_say() {
    assert_eq!(
        PsspOptions::read(&Section::empty(NAME)).unwrap(),
        PsspOptions::default()
    );
}

#[test]
fn options_are_read_from_the_pssp_section() {
    let text = "pssp.max_vls 4\npssp.deadlock_removal FALSE\npssp.best_effort yes\npssp.seed 9\n";
    let settings = crate::config::Settings::parse(text, "x", &crate::engines::config_sections());
    let o = PsspOptions::read(&settings.section(NAME)).unwrap();
    let l = &o.layering;
    assert_eq!(
        (
            l.max_vls,
            o.deadlock_removal,
            l.balance_vls,
            o.seed,
            l.best_effort
        ),
        (4, false, false, 9, true)
    );
    let bad = crate::config::Settings::parse(
        "pssp.balance_vls maybe\n",
        "x",
        &crate::engines::config_sections(),
    );
    assert!(PsspOptions::read(&bad.section(NAME))
        .unwrap_err()
        .message
        .contains("TRUE or FALSE"));
}
