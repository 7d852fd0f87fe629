//! Reading and writing fabric descriptions.

pub mod guid2lid;
pub mod ibnetdiscover;
pub mod netfile;
