//! One error for everything the drive can refuse, for callers that keep a
//! single error for the device (as the simulator's `SimError::Device` does).
//!
//! Each fallible call returns the type that says exactly what went wrong:
//! [`ConfigError`] from [`DeviceConfig`](crate::DeviceConfig) and
//! [`Device::new`](crate::Device::new), [`FtlError`] from
//! [`Device::precondition`](crate::Device::precondition), [`Refused`] from
//! [`Device::submit`](crate::Device::submit), [`GcModeBusy`] from
//! [`Device::set_gc_mode`](crate::Device::set_gc_mode). [`DeviceError`] holds
//! any of them, converts from each, and displays each unchanged.

use thiserror::Error;

use crate::config::ConfigError;
use crate::device::{GcModeBusy, Refused};
use crate::ftl::FtlError;

/// Any error of the device crate. Wrap it as `Device(#[from] DeviceError)` in
/// a caller's error and convert at the call: `.map_err(DeviceError::from)?`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DeviceError {
    /// The configuration cannot describe a drive (a field out of range, a
    /// TOML file that does not parse, an unknown preset).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The map has no room (aging a drive with too little spare space) or a
    /// page beyond the drive.
    #[error(transparent)]
    Ftl(#[from] FtlError),
    /// A command arrived while the queue was full or draining.
    #[error(transparent)]
    Refused(#[from] Refused),
    /// The GC mode was switched while GC was owed or running.
    #[error(transparent)]
    GcModeBusy(#[from] GcModeBusy),
}
