//! Go's `sort.Sort`: pattern-defeating quicksort over `Less`/`Swap`, not stable. Karmada sorts
//! the dynamic-weight lists with it (`TargetClustersList`, by replicas descending), so which of
//! several equally weighted clusters comes first, and hence which ones an Aggregated placement
//! keeps, is decided by this algorithm's exact sequence of comparisons and swaps. Up to 12
//! elements it is an insertion sort (stable); beyond, equal elements move as pdqsort moves them.
//!
//! Provenance: golang/go (Go 1.22+), `src/sort/sort.go` (`Sort`, `xorshift`,
//! `nextPowerOfTwo`) and `src/sort/zsortinterface.go` (`pdqsort` and its helpers), BSD licence.
//! Indices are `isize` because Go's loops compare them below zero and below the range start.

/// Sorts `data` exactly as Go's `sort.Sort` would with `Less(i, j) = less(data[i], data[j])`.
pub fn sort<T>(data: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = data.len();
    if n <= 1 {
        return;
    }
    let mut s = Sorter { data, less };
    let limit = bits_len(n as u64);
    s.pdqsort(0, n as isize, limit);
}

/// Go's `bits.Len`: the number of bits needed to represent `x`.
fn bits_len(x: u64) -> u32 {
    u64::BITS - x.leading_zeros()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

struct Sorter<'a, T, F> {
    data: &'a mut [T],
    less: F,
}

impl<T, F: Fn(&T, &T) -> bool> Sorter<'_, T, F> {
    fn less(&self, i: isize, j: isize) -> bool {
        (self.less)(&self.data[i as usize], &self.data[j as usize])
    }

    fn swap(&mut self, i: isize, j: isize) {
        self.data.swap(i as usize, j as usize);
    }

    fn insertion_sort(&mut self, a: isize, b: isize) {
        for i in a + 1..b {
            let mut j = i;
            while j > a && self.less(j, j - 1) {
                self.swap(j, j - 1);
                j -= 1;
            }
        }
    }

    fn sift_down(&mut self, lo: isize, hi: isize, first: isize) {
        let mut root = lo;
        loop {
            let mut child = 2 * root + 1;
            if child >= hi {
                return;
            }
            if child + 1 < hi && self.less(first + child, first + child + 1) {
                child += 1;
            }
            if !self.less(first + root, first + child) {
                return;
            }
            self.swap(first + root, first + child);
            root = child;
        }
    }

    fn heap_sort(&mut self, a: isize, b: isize) {
        let first = a;
        let hi = b - a;
        let mut i = (hi - 1) / 2;
        while i >= 0 {
            self.sift_down(i, hi, first);
            i -= 1;
        }
        let mut i = hi - 1;
        while i >= 0 {
            self.swap(first, first + i);
            self.sift_down(0, i, first);
            i -= 1;
        }
    }

    fn pdqsort(&mut self, mut a: isize, mut b: isize, mut limit: u32) {
        const MAX_INSERTION: isize = 12;
        let mut was_balanced = true;
        let mut was_partitioned = true;
        loop {
            let length = b - a;
            if length <= MAX_INSERTION {
                self.insertion_sort(a, b);
                return;
            }
            if limit == 0 {
                self.heap_sort(a, b);
                return;
            }
            if !was_balanced {
                self.break_patterns(a, b);
                limit -= 1;
            }
            let (mut pivot, mut hint) = self.choose_pivot(a, b);
            if hint == Hint::Decreasing {
                self.reverse_range(a, b);
                pivot = (b - 1) - (pivot - a);
                hint = Hint::Increasing;
            }
            if was_balanced
                && was_partitioned
                && hint == Hint::Increasing
                && self.partial_insertion_sort(a, b)
            {
                return;
            }
            if a > 0 && !self.less(a - 1, pivot) {
                a = self.partition_equal(a, b, pivot);
                continue;
            }
            let (mid, already_partitioned) = self.partition(a, b, pivot);
            was_partitioned = already_partitioned;
            let (left, right) = (mid - a, b - mid);
            let balance_threshold = length / 8;
            if left < right {
                was_balanced = left >= balance_threshold;
                self.pdqsort(a, mid, limit);
                a = mid + 1;
            } else {
                was_balanced = right >= balance_threshold;
                self.pdqsort(mid + 1, b, limit);
                b = mid;
            }
        }
    }

    fn partition(&mut self, a: isize, b: isize, pivot: isize) -> (isize, bool) {
        self.swap(a, pivot);
        let (mut i, mut j) = (a + 1, b - 1);
        while i <= j && self.less(i, a) {
            i += 1;
        }
        while i <= j && !self.less(j, a) {
            j -= 1;
        }
        if i > j {
            self.swap(j, a);
            return (j, true);
        }
        self.swap(i, j);
        i += 1;
        j -= 1;
        loop {
            while i <= j && self.less(i, a) {
                i += 1;
            }
            while i <= j && !self.less(j, a) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
        self.swap(j, a);
        (j, false)
    }

    fn partition_equal(&mut self, a: isize, b: isize, pivot: isize) -> isize {
        self.swap(a, pivot);
        let (mut i, mut j) = (a + 1, b - 1);
        loop {
            while i <= j && !self.less(a, i) {
                i += 1;
            }
            while i <= j && self.less(a, j) {
                j -= 1;
            }
            if i > j {
                break;
            }
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
        i
    }

    fn partial_insertion_sort(&mut self, a: isize, b: isize) -> bool {
        const MAX_STEPS: usize = 5;
        const SHORTEST_SHIFTING: isize = 50;
        let mut i = a + 1;
        for _ in 0..MAX_STEPS {
            while i < b && !self.less(i, i - 1) {
                i += 1;
            }
            if i == b {
                return true;
            }
            if b - a < SHORTEST_SHIFTING {
                return false;
            }
            self.swap(i, i - 1);
            // Shift the smaller one to the left (Go walks down to index 1, not to `a`).
            if i - a >= 2 {
                let mut j = i - 1;
                while j >= 1 {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j -= 1;
                }
            }
            // Shift the greater one to the right.
            if b - i >= 2 {
                let mut j = i + 1;
                while j < b {
                    if !self.less(j, j - 1) {
                        break;
                    }
                    self.swap(j, j - 1);
                    j += 1;
                }
            }
        }
        false
    }

    fn break_patterns(&mut self, a: isize, b: isize) {
        let length = b - a;
        if length >= 8 {
            let mut random = length as u64;
            let modulus = 1u64 << bits_len(length as u64);
            let mut idx = a + (length / 4) * 2 - 1;
            while idx <= a + (length / 4) * 2 + 1 {
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                let mut other = (random & (modulus - 1)) as isize;
                if other >= length {
                    other -= length;
                }
                self.swap(idx, a + other);
                idx += 1;
            }
        }
    }

    fn choose_pivot(&mut self, a: isize, b: isize) -> (isize, Hint) {
        const SHORTEST_NINTHER: isize = 50;
        const MAX_SWAPS: u32 = 4 * 3;
        let l = b - a;
        let mut swaps = 0u32;
        let mut i = a + l / 4;
        let mut j = a + l / 4 * 2;
        let mut k = a + l / 4 * 3;
        if l >= 8 {
            if l >= SHORTEST_NINTHER {
                i = self.median_adjacent(i, &mut swaps);
                j = self.median_adjacent(j, &mut swaps);
                k = self.median_adjacent(k, &mut swaps);
            }
            j = self.median(i, j, k, &mut swaps);
        }
        match swaps {
            0 => (j, Hint::Increasing),
            MAX_SWAPS => (j, Hint::Decreasing),
            _ => (j, Hint::Unknown),
        }
    }

    fn order2(&self, a: isize, b: isize, swaps: &mut u32) -> (isize, isize) {
        if self.less(b, a) {
            *swaps += 1;
            (b, a)
        } else {
            (a, b)
        }
    }

    fn median(&self, a: isize, b: isize, c: isize, swaps: &mut u32) -> isize {
        let (a, b) = self.order2(a, b, swaps);
        let (b, c) = self.order2(b, c, swaps);
        let _ = c;
        let (_, b) = self.order2(a, b, swaps);
        b
    }

    fn median_adjacent(&self, a: isize, swaps: &mut u32) -> isize {
        self.median(a - 1, a, a + 1, swaps)
    }

    fn reverse_range(&mut self, a: isize, b: isize) {
        let (mut i, mut j) = (a, b - 1);
        while i < j {
            self.swap(i, j);
            i += 1;
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random sequence for the tests.
    fn sequence(seed: u64, n: usize, range: u64) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % range
            })
            .collect()
    }

    #[test]
    fn sorts_every_shape() {
        for n in [0, 1, 2, 5, 12, 13, 20, 49, 50, 51, 64, 100, 257, 1000] {
            for (seed, range) in [(1, 3), (7, 1000), (42, 1), (99, 50)] {
                let mut v: Vec<(u64, usize)> = sequence(seed, n, range)
                    .into_iter()
                    .enumerate()
                    .map(|(i, x)| (x, i))
                    .collect();
                let mut want: Vec<u64> = v.iter().map(|p| p.0).collect();
                want.sort_unstable();
                sort(&mut v, |a, b| a.0 < b.0);
                let got: Vec<u64> = v.iter().map(|p| p.0).collect();
                assert_eq!(got, want, "n={n} seed={seed} range={range}");
            }
            // Ascending, descending and organ-pipe inputs (the hints and pattern breaking).
            for shape in 0..3 {
                let mut v: Vec<usize> = (0..n)
                    .map(|i| match shape {
                        0 => i,
                        1 => n - i,
                        _ => i.min(n - i),
                    })
                    .collect();
                let mut want = v.clone();
                want.sort_unstable();
                sort(&mut v, |a, b| a < b);
                assert_eq!(v, want, "n={n} shape={shape}");
            }
        }
    }

    #[test]
    fn up_to_twelve_elements_equal_ones_keep_their_order() {
        let mut v: Vec<(u32, &str)> = vec![
            (1, "a"),
            (3, "b"),
            (1, "c"),
            (3, "d"),
            (2, "e"),
            (3, "f"),
            (1, "g"),
            (2, "h"),
            (3, "i"),
            (1, "j"),
            (2, "k"),
            (3, "l"),
        ];
        sort(&mut v, |a, b| a.0 > b.0);
        let names: String = v.iter().map(|p| p.1).collect();
        assert_eq!(names, "bdfilehkacgj");
    }

    #[test]
    fn beyond_twelve_a_sorted_run_is_left_alone() {
        // Thirteen equal weights: the pivot sample shows an increasing run and the partial
        // insertion sort finds the input sorted, so nothing moves; with one larger element
        // last the slice is partitioned (ties may move) and still sorted.
        let mut v: Vec<(u32, usize)> = (0..13).map(|i| (5, i)).collect();
        sort(&mut v, |a, b| a.0 > b.0);
        assert_eq!(
            v.iter().map(|p| p.1).collect::<Vec<_>>(),
            (0..13).collect::<Vec<_>>()
        );
        let mut v: Vec<(u32, usize)> = (0..13).map(|i| (if i == 12 { 9 } else { 5 }, i)).collect();
        sort(&mut v, |a, b| a.0 > b.0);
        assert_eq!(v[0], (9, 12));
        assert!(v[1..].iter().all(|p| p.0 == 5));
    }
}
