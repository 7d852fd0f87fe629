//! Reading and writing fabric descriptions.

pub mod guid2lid;
pub mod ibnetdiscover;
pub mod ibnetdiscover_ports;
pub mod netfile;
