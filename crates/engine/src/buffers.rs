//! I/O buffers: one aligned buffer per engine slot, in one allocation that is
//! registered with the ring (fixed buffers: the kernel maps them once rather
//! than on every I/O).

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// O_DIRECT needs buffers aligned to the logical block size; 4 KiB covers
/// every common device.
pub const ALIGN: usize = 4096;

/// `count` buffers of `size` bytes each (a multiple of [`ALIGN`]).
///
/// The memory lives as long as this value; the engine keeps it alive until
/// every operation that uses it has completed (see `Engine`'s `Drop`).
pub struct Buffers {
    base: *mut u8,
    layout: Layout,
    size: usize,
    count: usize,
}

// SAFETY: the buffers are plain memory owned by this value; the engine hands
// out disjoint slices by slot and moves the whole set between threads only
// with the engine.
unsafe impl Send for Buffers {}

impl Buffers {
    pub fn new(count: usize, size: usize) -> Buffers {
        let size = size.max(ALIGN).div_ceil(ALIGN) * ALIGN;
        let count = count.max(1);
        let layout = Layout::from_size_align(size * count, ALIGN).expect("a valid layout");
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc_zeroed(layout) };
        assert!(!base.is_null(), "out of memory for I/O buffers");
        Buffers {
            base,
            layout,
            size,
            count,
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn count(&self) -> usize {
        self.count
    }

    pub fn ptr(&self, index: usize) -> *mut u8 {
        assert!(index < self.count);
        // SAFETY: index < count, so the offset stays inside the allocation.
        unsafe { self.base.add(index * self.size) }
    }

    /// Buffer `index` to fill or check. The caller must not use it while the
    /// kernel owns it (between submission and completion).
    pub fn slice_mut(&mut self, index: usize, len: usize) -> &mut [u8] {
        assert!(len <= self.size);
        // SAFETY: in bounds (asserted), and &mut self makes it unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(index), len) }
    }

    pub fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.count)
            .map(|i| libc::iovec {
                iov_base: self.ptr(i).cast(),
                iov_len: self.size,
            })
            .collect()
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base, self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_disjoint() {
        let mut b = Buffers::new(3, 5000);
        assert_eq!(b.size(), 8192);
        for i in 0..3 {
            assert_eq!(b.ptr(i) as usize % ALIGN, 0);
            b.slice_mut(i, 8192).fill(i as u8 + 1);
        }
        assert!(b.slice_mut(1, 8192).iter().all(|x| *x == 2));
    }
}
