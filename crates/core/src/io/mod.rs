//! Reading and writing fabric descriptions.

pub mod netfile;
