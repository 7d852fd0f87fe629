//! Reading and writing fabric descriptions.

pub mod detect;
pub mod guid2lid;
pub mod ibnetdiscover;
pub mod netfile;
pub mod pasted;
pub mod ports_report;
