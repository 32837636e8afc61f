//! # iosteer-device: the SSD on which every policy is judged
//!
//! A model of a flash drive in integer nanoseconds: NAND geometry and timing,
//! an FTL mapped by page or by smaller units (sectors packed into page
//! programs by a write buffer) with a free-block pool, garbage collection (greedy, FIFO,
//! cost-benefit; foreground below a watermark, background only after idle
//! time), TRIM with a configurable cost, and a SATA NCQ or NVMe host interface.
//! No machine here has the drive of the Netflix paper; this crate is that
//! drive, and it reproduces the reasons reads wait: dies busy with programs,
//! erases and GC page moves, and queues full of slow writes.
//!
//! ## Where to start
//!
//! - [`DeviceConfig`] and its presets ([`config`]): `consumer-sata`,
//!   `enterprise-nvme`, `diskSim-slc`, each number with its origin; any of
//!   them loads from and saves to TOML.
//! - [`Device`] ([`device`]): submit scheduler [`Command`](iosteer_sched::Command)s,
//!   ask [`Device::next_event`], [`Device::advance`] to it and collect
//!   [`Finished`] commands; [`Device::view`] is what a scheduler sees. Its
//!   module overview says how the drive is modelled; the model itself is in
//!   parts, each file opening with what it does:
//!   - `device/mod.rs`: the drive's state, its statistics, and the event loop;
//!   - `device/host.rs`: command slots, NCQ/NVMe queueing, the host link,
//!     non-queued TRIM and FLUSH draining the queue;
//!   - `device/dies.rs`: per-die queues and busy time, NAND operations,
//!     channel transfers, where a write's pages go;
//!   - `device/gc.rs`: foreground and background GC as die time,
//!     semi-preemptive states, merge and suspend;
//!   - `device/precondition.rs`: aging a fresh drive ([`Precondition`]);
//!   - `device/buffer.rs`: the write buffer of a sector-mapped drive.
//! - [`Ftl`] ([`ftl`]): mapping, block pool, victims, GC; untimed;
//!   `ftl/replicate.rs` copies one aged die onto every die (`aged-fast`).
//! - [`waf`]: the analytical write-amplification check.
//! - [`import`]: drives from DiskSim `.parv` and MQSim `ssdconfig.xml` files.
//! - [`family`]: a plausible drive per seed (`family:N`), for judging policies
//!   on drives they were not developed on.
//! - [`burst`]: write-burst rates (the write cache's table).
//! - [`DeviceError`] ([`error`]): every error of the crate in one type, for
//!   callers that wrap the device's errors in their own.
//!
//! ## Example
//!
//! ```
//! use iosteer_device::{Device, DeviceConfig, Precondition};
//! use iosteer_sched::{Command, Nanos, Op, Request};
//!
//! let mut config = DeviceConfig::preset("consumer-sata")?;
//! config.geometry.blocks_per_plane = 64; // a small drive for the example
//! config.gc.high_watermark = 8;
//! config.over_provisioning = 0.2;
//! let mut drive = Device::new(config)?;
//! drive.precondition(Precondition::default()).expect("ages");
//!
//! let now = Nanos::ZERO;
//! let read = Command::single(Request::new(1, Op::Read, 0, 64 << 10, now), now);
//! drive.submit(read, now).expect("an idle drive accepts");
//! let mut finished = Vec::new();
//! while let Some(t) = drive.next_event() {
//!     drive.advance(t, &mut finished);
//!     if !finished.is_empty() { break; }
//! }
//! assert!(finished[0].at > Nanos::from_micros(60), "at least one page read");
//! # Ok::<(), iosteer_device::ConfigError>(())
//! ```

pub mod burst;
pub mod config;
pub mod device;
pub mod error;
pub mod family;
pub mod ftl;
pub mod import;
pub mod splitmix;
pub mod waf;

pub use config::{ConfigError, DeviceConfig, GcMode, PreconditionTable, VictimPolicy};
pub use device::{
    Aging, Device, DeviceStats, DieTime, Finished, GcModeBusy, GcOwed, KeepGoing, Precondition,
    ReadWaits, Refused, StartState, StartStateError, UnwrittenReads, Wear,
};
pub use error::DeviceError;
pub use ftl::{Ftl, FtlCounters, FtlError, GcWork};
pub use splitmix::SplitMix64;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod properties_sectors;
#[cfg(test)]
mod test_drives;
