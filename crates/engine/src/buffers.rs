//! I/O buffers: one aligned buffer per engine slot, in one allocation that is
//! registered with the ring (fixed buffers: the kernel maps them once rather
//! than on every I/O).

use std::alloc::{alloc_zeroed, dealloc, Layout};

use thiserror::Error;

/// O_DIRECT needs buffers aligned to the logical block size; 4 KiB covers
/// every common device.
pub const ALIGN: usize = 4096;

/// The memory for I/O buffers could not be had.
#[derive(Debug, Error)]
#[non_exhaustive]
#[error("cannot allocate {bytes} bytes of I/O buffers ({count} of {size} bytes)")]
pub struct BuffersUnavailable {
    pub bytes: usize,
    pub count: usize,
    pub size: usize,
}

/// `count` buffers of `size` bytes each (a multiple of [`ALIGN`]).
///
/// The memory lives as long as this value; the engine keeps it alive until
/// every operation that uses it has completed (see `Engine`'s `Drop`).
pub struct Buffers {
    base: *mut u8,
    layout: Layout,
    size: usize,
    count: usize,
    /// Never freed: the kernel may still write into it.
    leaked: bool,
}

// SAFETY: the buffers are plain memory owned by this value; the engine hands
// out disjoint slices by slot and moves the whole set between threads only
// with the engine.
unsafe impl Send for Buffers {}

impl Buffers {
    /// Allocates the buffers; running out of memory (or an impossible size)
    /// is an error, not a panic, since the size comes from the caller.
    pub fn new(count: usize, size: usize) -> Result<Buffers, BuffersUnavailable> {
        let size = size.max(ALIGN).div_ceil(ALIGN) * ALIGN;
        let count = count.max(1);
        let unavailable = BuffersUnavailable {
            bytes: size.saturating_mul(count),
            count,
            size,
        };
        let Some(layout) = size
            .checked_mul(count)
            .and_then(|bytes| Layout::from_size_align(bytes, ALIGN).ok())
        else {
            return Err(unavailable);
        };
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc_zeroed(layout) };
        if base.is_null() {
            return Err(unavailable);
        }
        Ok(Buffers {
            base,
            layout,
            size,
            count,
            leaked: false,
        })
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

    /// Never frees this memory, for when the kernel may still write into it
    /// and nothing can tell when it stops.
    pub fn leak(&mut self) {
        self.leaked = true;
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
        if !self.leaked {
            // SAFETY: allocated in `new` with this layout.
            unsafe { dealloc(self.base, self.layout) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_disjoint() {
        let mut b = Buffers::new(3, 5000).unwrap();
        assert_eq!(b.size(), 8192);
        for i in 0..3 {
            assert_eq!(b.ptr(i) as usize % ALIGN, 0);
            b.slice_mut(i, 8192).fill(i as u8 + 1);
        }
        assert!(b.slice_mut(1, 8192).iter().all(|x| *x == 2));
    }

    #[test]
    fn buffers_too_large_to_allocate_are_an_error_not_a_panic() {
        let err = Buffers::new(1 << 40, 1 << 30)
            .err()
            .expect("no such memory");
        assert!(err.to_string().contains("I/O buffers"), "{err}");
        assert!(Buffers::new(usize::MAX / ALIGN, ALIGN * 4).is_err());
    }
}
