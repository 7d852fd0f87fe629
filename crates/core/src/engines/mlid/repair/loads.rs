//! The routes on every channel, kept so that the busiest channel, and the
//! busiest but one, are found without a pass over all of them: the repair
//! asks for them after every move (70,000 channels on the 36-port
//! three-level tree, thousands of moves).

/// Per channel (`SwitchGraph::channel`): the host routes leaving there, in
/// a max tree (a leaf per channel, every inner node the most below it).
pub(super) struct Loads {
    channels: usize,
    /// Leaves from `leaves` on; node `i`'s children are `2i` and `2i + 1`.
    most: Vec<u64>,
    leaves: usize,
}

impl Loads {
    pub(super) fn new(loads: &[u64]) -> Self {
        let leaves = loads.len().next_power_of_two().max(1);
        let mut most = vec![0u64; 2 * leaves];
        most[leaves..leaves + loads.len()].copy_from_slice(loads);
        for i in (1..leaves).rev() {
            most[i] = most[2 * i].max(most[2 * i + 1]);
        }
        Loads {
            channels: loads.len(),
            most,
            leaves,
        }
    }

    pub(super) fn get(&self, channel: usize) -> u64 {
        self.most[self.leaves + channel]
    }

    pub(super) fn add(&mut self, channel: usize, routes: u64) {
        self.set(channel, self.get(channel) + routes);
    }

    /// Never below zero (the routes taken off passed there; saturating
    /// all the same: the plugin must not panic).
    pub(super) fn take(&mut self, channel: usize, routes: u64) {
        self.set(channel, self.get(channel).saturating_sub(routes));
    }

    fn set(&mut self, channel: usize, load: u64) {
        let mut i = self.leaves + channel;
        self.most[i] = load;
        while i > 1 {
            i /= 2;
            self.most[i] = self.most[2 * i].max(self.most[2 * i + 1]);
        }
    }

    /// The busiest channel (the lowest-numbered of equals) and its load.
    pub(super) fn busiest(&self) -> Option<(usize, u64)> {
        if self.channels == 0 {
            return None;
        }
        let mut i = 1;
        while i < self.leaves {
            i = if self.most[2 * i] == self.most[i] {
                2 * i
            } else {
                2 * i + 1
            };
        }
        Some((i - self.leaves, self.most[i]))
    }

    /// The most any channel but `channel` carries.
    pub(super) fn most_except(&self, channel: usize) -> u64 {
        self.most_in(0, channel)
            .max(self.most_in(channel + 1, self.channels))
    }

    /// The most on channels `from..to`.
    fn most_in(&self, from: usize, to: usize) -> u64 {
        let (mut lo, mut hi) = (from + self.leaves, to.max(from) + self.leaves);
        let mut most = 0;
        while lo < hi {
            if lo % 2 == 1 {
                most = most.max(self.most[lo]);
                lo += 1;
            }
            if hi % 2 == 1 {
                hi -= 1;
                most = most.max(self.most[hi]);
            }
            lo /= 2;
            hi /= 2;
        }
        most
    }

    /// Every channel's load, in channel order.
    #[cfg(test)]
    pub(super) fn all(&self) -> &[u64] {
        &self.most[self.leaves..self.leaves + self.channels]
    }
}

#[cfg(test)]
mod tests {
    use super::Loads;

    #[test]
    fn the_busiest_is_the_first_of_the_most_loaded_and_follows_changes() {
        let mut l = Loads::new(&[3, 7, 2, 7, 1]);
        assert_eq!(l.busiest(), Some((1, 7)));
        assert_eq!(l.most_except(1), 7);
        l.take(1, 4);
        assert_eq!(l.busiest(), Some((3, 7)));
        assert_eq!(l.most_except(3), 3);
        l.add(4, 9);
        assert_eq!(l.busiest(), Some((4, 10)));
        assert_eq!(l.most_except(4), 7);
        assert_eq!(l.all(), &[3, 3, 2, 7, 10]);
        l.take(0, 5);
        assert_eq!(l.get(0), 0);
        assert_eq!(Loads::new(&[]).busiest(), None);
    }
}
