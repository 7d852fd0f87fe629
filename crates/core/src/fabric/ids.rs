//! Typed indices and numbers of the fabric model, so that a node id, a
//! switch index, a LID and a port number cannot be mixed up: all four used
//! to be plain integers, and switch indices and node ids were both
//! `usize`.
//!
//! Dense tables stay plain vectors: `Vec<T>` and `[T]` can be indexed by
//! `NodeId`, `SwitchId` and `Lid` directly (`lft[lid]`, `hosts[switch]`).

use std::fmt;
use std::ops::{Index, IndexMut};

/// Index of a node in `Fabric::nodes()` (the order the source listed them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);

/// Index of a switch in `Fabric::switches()`. Switches are numbered in
/// node-GUID order when the fabric is built, so that this order (and every
/// tie an engine breaks by it) is the same whether OpenSM's subnet or a net
/// file listed the nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SwitchId(u32);

/// A local identifier. `Lid::NONE` (0) marks a port without one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lid(u16);

/// A port number of a node: 0 is a switch's management port, 255 in a
/// forwarding table means "no path".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortNum(u8);

macro_rules! dense_index {
    ($name:ident, $repr:ty) => {
        impl $name {
            pub const fn new(index: usize) -> Self {
                $name(index as $repr)
            }

            /// The position in dense tables.
            pub const fn idx(self) -> usize {
                self.0 as usize
            }

            /// `0..count` as ids.
            pub fn range(
                count: usize,
            ) -> impl DoubleEndedIterator<Item = $name> + ExactSizeIterator + Clone {
                (0..count).map($name::new)
            }
        }

        impl<T> Index<$name> for [T] {
            type Output = T;
            fn index(&self, i: $name) -> &T {
                &self[i.idx()]
            }
        }

        impl<T> IndexMut<$name> for [T] {
            fn index_mut(&mut self, i: $name) -> &mut T {
                &mut self[i.idx()]
            }
        }

        impl<T> Index<$name> for Vec<T> {
            type Output = T;
            fn index(&self, i: $name) -> &T {
                &self[i.idx()]
            }
        }

        impl<T> IndexMut<$name> for Vec<T> {
            fn index_mut(&mut self, i: $name) -> &mut T {
                &mut self[i.idx()]
            }
        }
    };
}

dense_index!(NodeId, u32);
dense_index!(SwitchId, u32);
dense_index!(Lid, u16);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "node #{}", self.0)
    }
}

impl fmt::Display for SwitchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "switch #{}", self.0)
    }
}

impl Lid {
    pub const NONE: Lid = Lid(0);

    pub const fn from_raw(lid: u16) -> Self {
        Lid(lid)
    }

    pub const fn raw(self) -> u16 {
        self.0
    }

    pub const fn is_none(self) -> bool {
        self.0 == 0
    }

    /// The LID `k` above this one (the k-th LID of a port with LMC > 0).
    pub const fn offset(self, k: u16) -> Lid {
        Lid(self.0 + k)
    }
}

/// LIDs read from files and tools are plain numbers: comparing one with a
/// `Lid` needs no conversion.
impl PartialEq<u16> for Lid {
    fn eq(&self, other: &u16) -> bool {
        self.0 == *other
    }
}

impl PartialEq<u8> for PortNum {
    fn eq(&self, other: &u8) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for Lid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PortNum {
    /// A switch's management port (the switch's own LIDs).
    pub const MANAGEMENT: PortNum = PortNum(0);
    /// The forwarding-table entry for "no route" (OpenSM's OSM_NO_PATH).
    pub const NO_PATH: PortNum = PortNum(0xff);

    pub const fn new(port: u8) -> Self {
        PortNum(port)
    }

    pub const fn raw(self) -> u8 {
        self.0
    }

    pub const fn idx(self) -> usize {
        self.0 as usize
    }

    pub const fn is_management(self) -> bool {
        self.0 == 0
    }

    pub const fn is_no_path(self) -> bool {
        self.0 == 0xff
    }
}

impl fmt::Display for PortNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T> Index<PortNum> for [T] {
    type Output = T;
    fn index(&self, i: PortNum) -> &T {
        &self[i.idx()]
    }
}

impl<T> Index<PortNum> for Vec<T> {
    type Output = T;
    fn index(&self, i: PortNum) -> &T {
        &self[i.idx()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_ids_index_dense_tables() {
        let v: Vec<u32> = Vec::from([10, 20, 30]);
        assert_eq!(v[SwitchId::new(2)], 30);
        assert_eq!(v[NodeId::new(0)], 10);
        assert_eq!(v[Lid::from_raw(1)], 20);
        assert_eq!(v[PortNum::new(1)], 20);
        assert_eq!(SwitchId::range(3).map(SwitchId::idx).sum::<usize>(), 3);
        assert!(
            Lid::NONE.is_none()
                && PortNum::NO_PATH.is_no_path()
                && PortNum::MANAGEMENT.is_management()
        );
        assert_eq!(Lid::from_raw(4).offset(3), Lid::from_raw(7));
    }
}
