//! Which form a fabric file is in, and reading it in that form: an ibsim
//! net file, ibnetdiscover's topology (also ibdiagnet2's
//! `ibdiagnet2.ibnetdiscover`), its ports report (`ibnetdiscover -p`), or
//! a subnet list (ibdiagnet2's `ibdiagnet2.lst`, OpenSM's
//! `opensm-subnet.lst`).

use crate::dumps::subnet_lst;
use crate::fabric::FabricBuilder;
use crate::io::pasted::{self, Skipped};
use crate::io::{ibnetdiscover, netfile, ports_report};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// ibsim's net file: names, no GUIDs or LIDs.
    NetFile,
    /// ibnetdiscover's default output (and ibdiagnet2's copy of it).
    Ibnetdiscover,
    /// `ibnetdiscover -p`.
    PortsReport,
    /// `ibdiagnet2.lst` / `opensm-subnet.lst`: one line per cable end.
    SubnetList,
}

impl Form {
    pub const NAMES: [&'static str; 4] = ["net", "ibnetdiscover", "ports", "lst"];

    /// Whether the file carries the LIDs an SM assigned.
    pub fn has_lids(self) -> bool {
        self != Form::NetFile
    }
}

impl std::fmt::Display for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Form::NetFile => "net",
            Form::Ibnetdiscover => "ibnetdiscover",
            Form::PortsReport => "ports",
            Form::SubnetList => "lst",
        })
    }
}

impl std::str::FromStr for Form {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "net" => Ok(Form::NetFile),
            "ibnetdiscover" => Ok(Form::Ibnetdiscover),
            "ports" => Ok(Form::PortsReport),
            "lst" => Ok(Form::SubnetList),
            _ => Err(format!(
                "unknown fabric format '{s}' (expected one of {})",
                Form::NAMES.join(", ")
            )),
        }
    }
}

/// The form of a fabric file, from its lines: a node header naming its node
/// by GUID (`"S-0002c9..."`) is ibnetdiscover's; a line `SW|CA|RT LID PORT
/// 0xGUID` the ports report's; anything else is read as a net file (whose
/// reader then says what is wrong).
pub fn detect(text: &str) -> Form {
    let text = pasted::without_bom(text);
    let guid_named = |l: &str| {
        ibnetdiscover::is_record(l)
            && ["\"S-", "\"H-", "\"R-"].iter().any(|p| l.contains(p))
            && !l.starts_with('[')
    };
    if text.lines().any(|l| guid_named(l.trim())) {
        Form::Ibnetdiscover
    } else if text.lines().any(|l| ports_report::is_record(l.trim())) {
        Form::PortsReport
    } else if text.lines().any(|l| is_lst_line(l.trim())) {
        Form::SubnetList
    } else {
        Form::NetFile
    }
}

/// `{ SW Ports:.. ... PortGUID:.. ... } { ... }`.
fn is_lst_line(line: &str) -> bool {
    line.starts_with("{ ") && line.contains("PortGUID:") && line.contains(" } { ")
}

/// A fabric file read.
pub struct FabricText {
    pub builder: FabricBuilder,
    pub form: Form,
    /// Lines around the topology that were not read (warn about them).
    pub skipped: Vec<Skipped>,
}

/// What is wrong with a fabric file, in the form it was read as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    pub form: Form,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: {} (read as {}; another form can be named with --format {})",
            self.line,
            self.message,
            self.form,
            Form::NAMES.join("|")
        )
    }
}

impl std::error::Error for ReadError {}

/// Reads `text` in `form`, or in the form [`detect`] finds.
pub fn read(text: &str, form: Option<Form>) -> Result<FabricText, ReadError> {
    let form = form.unwrap_or_else(|| detect(text));
    let err = |line, message| ReadError {
        form,
        line,
        message,
    };
    let (builder, skipped) = match form {
        Form::NetFile => (
            netfile::read(pasted::without_bom(text)).map_err(|e| err(e.line, e.message))?,
            Vec::new(),
        ),
        Form::Ibnetdiscover => {
            let d = ibnetdiscover::read_with_notes(text).map_err(|e| err(e.line, e.message))?;
            (d.builder, d.skipped)
        }
        Form::PortsReport => {
            let d = ports_report::read(text).map_err(|e| err(e.line, e.message))?;
            (d.builder, d.skipped)
        }
        Form::SubnetList => (
            subnet_lst::read(pasted::without_bom(text), 0).map_err(|e| err(e.line, e.message))?,
            Vec::new(),
        ),
    };
    Ok(FabricText {
        builder,
        form,
        skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_told_apart() {
        assert_eq!(detect("Switch 8 \"s0\"\n[1] \"h0\"[1]\n"), Form::NetFile);
        assert_eq!(
            detect("\u{feff}Switch\t8 \"S-0000000000200001\"\t# \"s1\" lid 5\n"),
            Form::Ibnetdiscover
        );
        assert_eq!(
            detect(
                "DR path slid 0; dlid 0; 0 -> new Switch\nSW 5 1 0x0000000000000010 4x QDR 's'\n"
            ),
            Form::PortsReport
        );
        assert_eq!("ports".parse::<Form>(), Ok(Form::PortsReport));
        assert!("xml"
            .parse::<Form>()
            .unwrap_err()
            .contains("net, ibnetdiscover, ports"));
    }

    #[test]
    fn a_net_file_with_a_bom_and_crlf_reads() {
        let net =
            "\u{feff}Switch 8 \"s0\"\r\n[1] \"h0\"[1]\r\n\r\nHca 1 \"h0\"\r\n[1] \"s0\"[1]\r\n";
        let r = read(net, None).unwrap();
        assert_eq!(r.form, Form::NetFile);
        assert_eq!(r.builder.node_count(), 2);
    }

    #[test]
    fn errors_say_the_form_and_the_line() {
        let e = read(
            "Switch 8 \"S-0000000000000010\"\n[1] \"S-0000000000000011\"[1]\n",
            None,
        )
        .err()
        .unwrap();
        assert_eq!(e.form, Form::Ibnetdiscover);
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("line 2: cable to"), "{e}");
    }
}
