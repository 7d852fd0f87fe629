//! `osmroute-path-select.txt`: for engines whose hosts should pick a
//! destination LID per source (mlid, §4.2 of its paper), which DLID a
//! source port uses towards each destination port. One line per ordered
//! pair of host ports, decimal: `SLID DLID_BASE DLID` (the source's base
//! LID, the destination's base LID, the LID to put in packets). MPI
//! launchers can read it; `osmroute check --dlid-choice` measures with it.

use std::io::Write;

use super::DumpError;
use crate::fabric::Lid;
use crate::routing::DlidChoice;

pub const PATH_SELECT_FILE: &str = "osmroute-path-select.txt";

pub fn write(choice: &DlidChoice, w: &mut impl Write) -> std::io::Result<()> {
    writeln!(w, "# osmroute path selection: SLID DLID_BASE DLID (source base LID, destination base LID, LID to use)")?;
    for (slid, base, dlid) in choice.entries() {
        writeln!(w, "{slid} {base} {dlid}")?;
    }
    Ok(())
}

pub fn read(text: &str) -> Result<DlidChoice, DumpError> {
    let mut choice = DlidChoice::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let nums: Vec<u16> = words.iter().filter_map(|w| w.parse().ok()).collect();
        let (&[slid, base, dlid], 3) = (&nums[..], words.len()) else {
            return Err(DumpError::new(
                PATH_SELECT_FILE,
                i + 1,
                "expected `SLID DLID_BASE DLID` (three decimal LIDs)",
            ));
        };
        choice.insert(
            Lid::from_raw(slid),
            Lid::from_raw(base),
            Lid::from_raw(dlid),
        );
    }
    Ok(choice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bad_lines() {
        let l = Lid::from_raw;
        let mut mine = DlidChoice::new();
        mine.insert(l(4), l(8), l(10));
        mine.insert(l(8), l(4), l(4));
        let mut out = Vec::new();
        write(&mine, &mut out).unwrap();
        let choice = read(&String::from_utf8(out).unwrap()).unwrap();
        assert_eq!(choice, mine);
        assert_eq!(choice.get(l(4), l(8)), Some(l(10)));
        assert_eq!(read("4 8\n").unwrap_err().line, 1);
        assert_eq!(read("4 8 9 x\n").unwrap_err().line, 1);
    }
}
