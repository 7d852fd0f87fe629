//! `osmroute-path-select.txt`: for engines whose hosts should pick a
//! destination LID per source (mlid, §4.2 of its paper), which DLID a
//! source port uses towards each destination port. One line per ordered
//! pair of host ports, decimal: `SLID DLID_BASE DLID` (the source's base
//! LID, the destination's base LID, the LID to put in packets). MPI
//! launchers can read it; `osmroute check --dlid-choice` measures with it.
//!
//! A choice given by ranks (mlid: a source of rank r uses offset (r + t)
//! mod the destination's LID count, t a term per destination) is written
//! compactly, one line per host port, `rank LID RANK TERM COUNT`: the file
//! stays linear in the fabric (one line per pair would be 136 million
//! lines on an 11,664-host tree).

use std::io::Write;

use super::DumpError;
use crate::fabric::Lid;
use crate::routing::DlidChoice;

pub const PATH_SELECT_FILE: &str = "osmroute-path-select.txt";

pub fn write(choice: &DlidChoice, w: &mut impl Write) -> std::io::Result<()> {
    if let Some(ranks) = choice.source_ranks() {
        writeln!(
            w,
            "# osmroute path selection by rank: lines `rank LID RANK TERM COUNT`; a source uses \
             DLID = DLID_BASE + ((its RANK + the destination's TERM) mod the destination's COUNT)"
        )?;
        for (lid, rank, term, count) in ranks {
            writeln!(w, "rank {lid} {rank} {term} {count}")?;
        }
        return Ok(());
    }
    writeln!(w, "# osmroute path selection: SLID DLID_BASE DLID (source base LID, destination base LID, LID to use)")?;
    for (slid, base, dlid) in choice.entries() {
        writeln!(w, "{slid} {base} {dlid}")?;
    }
    Ok(())
}

pub fn read(text: &str) -> Result<DlidChoice, DumpError> {
    let mut choice = DlidChoice::new();
    let mut ranks: Vec<(Lid, u32, u32, u16)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix("rank ") {
            let nums: Vec<u32> = rest
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            match (&nums[..], rest.split_whitespace().count()) {
                (&[lid, rank, term, count], 4)
                    if lid <= u16::MAX as u32 && count <= u16::MAX as u32 =>
                {
                    ranks.push((Lid::from_raw(lid as u16), rank, term, count as u16));
                }
                _ => {
                    return Err(DumpError::new(
                        PATH_SELECT_FILE,
                        i + 1,
                        "expected `rank LID RANK TERM COUNT` (decimal numbers)",
                    ))
                }
            }
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
    if !ranks.is_empty() {
        if !choice.is_empty() {
            return Err(DumpError::new(
                PATH_SELECT_FILE,
                1,
                "both `rank` lines and listed pairs: one or the other",
            ));
        }
        return Ok(DlidChoice::by_source_rank(ranks));
    }
    Ok(choice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_ranks_round_trip_in_one_line_per_host() {
        let l = Lid::from_raw;
        let mine = DlidChoice::by_source_rank([(l(4), 0, 0, 4), (l(8), 1, 3, 4), (l(12), 2, 1, 4)]);
        // rank 1 + term 0 -> offset 1; rank 2 + term 3 -> offset 1.
        assert_eq!(mine.get(l(8), l(4)), Some(l(5)));
        assert_eq!(mine.get(l(12), l(8)), Some(l(9)));
        let mut out = Vec::new();
        write(&mine, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().filter(|l| !l.starts_with('#')).count(), 3);
        assert_eq!(read(&text).unwrap(), mine);
        assert!(read("rank 4 0 4").is_err());
        assert!(read("rank 4 0 0 4\n4 8 9").is_err());
    }

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
