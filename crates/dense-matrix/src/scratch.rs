//! A per-thread buffer for the packed products (`add_sp_mat`) to unpack into, kept
//! between calls so a loop of products does not allocate and zero a full matrix each time.

use std::any::Any;
use std::cell::RefCell;

use crate::Real;

/// Buffers above this many bytes are freed after the call rather than kept, so a thread
/// that once unpacked a very large matrix does not hold its memory for good.
pub(crate) const KEEP_MAX_BYTES: usize = 64 << 20;

thread_local! {
    /// At most one kept `Vec<f32>` and one `Vec<f64>`.
    static BUFFERS: RefCell<Vec<Box<dyn Any>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on a buffer of `len` elements of this thread, reused from an earlier call
/// when one of at least `len` elements is kept. Its contents are whatever the last user
/// left (never uninitialised memory): `f` must write what it reads.
pub(crate) fn with_buffer<R: Real, T>(len: usize, f: impl FnOnce(&mut [R]) -> T) -> T {
    let kept = BUFFERS.with(|buffers| {
        let mut buffers = buffers.borrow_mut();
        let at = buffers.iter().position(|b| b.is::<Vec<R>>());
        at.map(|at| buffers.swap_remove(at))
    });
    let mut buf: Vec<R> = kept
        .and_then(|b| b.downcast::<Vec<R>>().ok())
        .map(|b| *b)
        .unwrap_or_default();
    if buf.len() < len {
        // a fresh buffer rather than `resize`, which would copy the old contents
        buf = vec![R::ZERO; len];
    }
    let out = f(&mut buf[..len]);
    if buf.len().saturating_mul(std::mem::size_of::<R>()) <= KEEP_MAX_BYTES {
        BUFFERS.with(|buffers| buffers.borrow_mut().push(Box::new(buf)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The length of this thread's kept buffer of `R`, if any.
    fn kept_len<R: Real>() -> Option<usize> {
        BUFFERS.with(|buffers| {
            buffers
                .borrow()
                .iter()
                .find_map(|b| b.downcast_ref::<Vec<R>>().map(Vec::len))
        })
    }

    #[test]
    fn buffers_are_reused_per_type_and_large_ones_are_not_kept() {
        assert_eq!(kept_len::<f32>(), None);
        with_buffer::<f32, _>(100, |b| {
            assert_eq!(b.len(), 100);
            b.fill(7.0);
        });
        assert_eq!(kept_len::<f32>(), Some(100));
        // a smaller request reuses it, with the old contents
        with_buffer::<f32, _>(10, |b| assert_eq!(b, &[7.0; 10][..]));
        // the other type has its own buffer
        with_buffer::<f64, _>(20, |b| assert_eq!(b.len(), 20));
        assert_eq!(kept_len::<f32>(), Some(100));
        assert_eq!(kept_len::<f64>(), Some(20));
        // one past the cap is used, then freed; the kept f32 buffer went with it
        let big = KEEP_MAX_BYTES / 4 + 1;
        with_buffer::<f32, _>(big, |b| assert_eq!(b.len(), big));
        assert_eq!(kept_len::<f32>(), None);
        assert_eq!(kept_len::<f64>(), Some(20));
        // exactly at the cap is kept
        with_buffer::<f64, _>(KEEP_MAX_BYTES / 8, |_| ());
        assert_eq!(kept_len::<f64>(), Some(KEEP_MAX_BYTES / 8));
    }
}
