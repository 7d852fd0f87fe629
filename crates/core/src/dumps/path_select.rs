//! `osmroute-path-select.txt`: for engines whose hosts should pick a
//! destination LID per source (mlid, §4.2 of its paper), which DLID a
//! source port uses towards each destination port. One line per ordered
//! pair of host ports, decimal: `SLID DLID_BASE DLID` (the source's base
//! LID, the destination's base LID, the LID to put in packets). MPI
//! launchers can read it; `osmroute check --dlid-choice` measures with it.

use std::collections::HashMap;
use std::io::Write;

use super::DumpError;

pub const PATH_SELECT_FILE: &str = "osmroute-path-select.txt";

pub fn write(choices: &[(u16, u16, u16)], w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "# osmroute path selection: SLID DLID_BASE DLID (source base LID, destination base LID, LID to use)")?;
    for &(slid, base, dlid) in choices {
        writeln!(w, "{slid} {base} {dlid}")?;
    }
    Ok(())
}

/// (source base LID, destination base LID) -> DLID.
pub type DlidChoice = HashMap<(u16, u16), u16>;

pub fn read(text: &str) -> Result<DlidChoice, DumpError> {
    let mut choice = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let nums: Vec<u16> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
        let [slid, base, dlid] = nums[..] else {
            return Err(DumpError::new(PATH_SELECT_FILE, i + 1, "expected `SLID DLID_BASE DLID` (three decimal LIDs)"));
        };
        choice.insert((slid, base), dlid);
    }
    Ok(choice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bad_lines() {
        let mut out = Vec::new();
        write(&[(4, 8, 10), (8, 4, 4)], &mut out).unwrap();
        let choice = read(&String::from_utf8(out).unwrap()).unwrap();
        assert_eq!(choice[&(4, 8)], 10);
        assert_eq!(choice[&(8, 4)], 4);
        let e = read("4 8\n").unwrap_err();
        assert_eq!(e.line, 1);
    }
}
