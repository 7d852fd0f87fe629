//! `osmroute-switch-sl.txt`: the path SLs of a destination-based routing
//! in compact form, one line per source switch,
//!
//! ```text
//! 0x0000000000200000 0001201...
//! ```
//!
//! the switch's node GUID and one hex digit (the SL) per destination LID
//! from 0 to the highest LID. With destination-based tables every port on
//! a switch takes the same path, and so the same SL, to a LID: this says
//! what `osmroute-path-sl.txt` says with a line per switch instead of one
//! per (CA, LID), which keeps 16k-host fabrics checkable (38 MB instead of
//! 7 GB). Written for routings whose SLs vary by path.

use std::io::{self, Write};

use super::DumpError;
use crate::fabric::{Fabric, Lid};
use crate::routing::{PathSl, SwitchSls};

pub const SWITCH_SL_FILE: &str = "osmroute-switch-sl.txt";

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Writes the table (nothing for routings whose SLs are not per switch).
pub fn write(fabric: &Fabric, path_sl: &PathSl, out: &mut impl Write) -> io::Result<()> {
    let PathSl::PerSourceSwitch(table) = path_sl else {
        return Ok(());
    };
    let lids = fabric.lft_len();
    let mut line = Vec::with_capacity(lids + 24);
    for s in fabric.switch_ids() {
        line.clear();
        write!(line, "{:#018x} ", fabric.switch_node(s).guid)?;
        line.extend(Lid::range(lids).map(|dlid| HEX[table.get(s, dlid) as usize & 0xf]));
        line.push(b'\n');
        out.write_all(&line)?;
    }
    Ok(())
}

pub fn read(fabric: &Fabric, text: &str) -> Result<PathSl, DumpError> {
    let lids = fabric.lft_len();
    let mut table = SwitchSls::new(fabric);
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |m: String| DumpError::new(SWITCH_SL_FILE, i + 1, m);
        let (guid, digits) = line
            .split_once(' ')
            .ok_or_else(|| err("expected `0xSWITCH_GUID SL-DIGITS`".into()))?;
        let guid = u64::from_str_radix(guid.trim_start_matches("0x"), 16)
            .map_err(|_| err(format!("`{guid}` is not a GUID")))?;
        let s = fabric
            .switch_with_guid(guid)
            .ok_or_else(|| err(format!("no switch {guid:#018x} in the fabric")))?;
        let digits = digits.trim().as_bytes();
        if digits.len() != lids {
            return Err(err(format!(
                "{} SL digits, but the fabric's LIDs go up to {} ({lids} digits expected)",
                digits.len(),
                lids - 1
            )));
        }
        for (dlid, &d) in Lid::range(lids).zip(digits) {
            let sl = (d as char)
                .to_digit(16)
                .ok_or_else(|| err(format!("`{}` is not a hex digit", d as char)))?;
            table.set(s, dlid, sl as u8);
        }
    }
    Ok(PathSl::PerSourceSwitch(table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::dragonfly::{dragonfly, Params};

    #[test]
    fn round_trip_and_errors() {
        let mut b = dragonfly(&Params::new(2, 1, 1)).unwrap();
        b.assign_lids_sequential(0).unwrap();
        let f = b.build().unwrap();
        let mut t = SwitchSls::new(&f);
        t.set(crate::fabric::SwitchId::new(1), Lid::from_raw(3), 5);
        t.set(crate::fabric::SwitchId::new(5), Lid::from_raw(1), 15);
        let sl = PathSl::PerSourceSwitch(t);
        let mut out = Vec::new();
        write(&f, &sl, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), f.switches().len());
        assert_eq!(read(&f, &text).unwrap(), sl);
        let bad = text.replacen('5', "g", 1);
        assert!(read(&f, &bad).is_err());
        assert!(read(&f, "0x1 00\n")
            .unwrap_err()
            .message
            .contains("no switch"));
    }
}
