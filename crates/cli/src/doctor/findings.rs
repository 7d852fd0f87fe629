//! What the doctor found: each problem with its severity and the line to
//! change, printed for people and summed up in the exit code.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// osmroute will not route, or the tables may have credit loops.
    Error,
    /// Works, but not as well as it could.
    Warning,
}

#[derive(Debug)]
pub struct Finding {
    pub severity: Severity,
    pub what: String,
    pub fix: String,
}

#[derive(Debug, Default)]
pub struct Findings {
    pub problems: Vec<Finding>,
    /// What was checked and is fine, for the reader's confidence.
    pub notes: Vec<String>,
}

impl Findings {
    pub fn add(&mut self, severity: Severity, what: String, fix: &str) {
        self.problems.push(Finding {
            severity,
            what,
            fix: fix.to_string(),
        });
    }

    pub fn note(&mut self, text: String) {
        self.notes.push(text);
    }

    fn count(&self, severity: Severity) -> usize {
        self.problems
            .iter()
            .filter(|p| p.severity == severity)
            .count()
    }

    pub fn print(&self) {
        for p in &self.problems {
            let label = match p.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            println!("{label}: {}\n  change to: {}", p.what, p.fix);
        }
        for n in &self.notes {
            println!("ok: {n}");
        }
        println!(
            "{} error(s), {} warning(s)",
            self.count(Severity::Error),
            self.count(Severity::Warning)
        );
    }

    /// 0 nothing found, 1 errors, 3 warnings only (2 is the CLI's "could
    /// not run").
    pub fn exit_code(&self) -> u8 {
        if self.count(Severity::Error) > 0 {
            1
        } else if self.count(Severity::Warning) > 0 {
            3
        } else {
            0
        }
    }
}
