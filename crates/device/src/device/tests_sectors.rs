//! Tests of the sector-mapped drive's timing: the write buffer gathers units
//! into page programs, waits out its flush timeout or a FLUSH for a partly
//! filled page, and a read of units in one page costs one page read.

use iosteer_sched::{Nanos, Op};

use super::tests::{cmd, run_until_idle};
use super::Device;
use crate::config::DeviceConfig;

/// consumer-sata scaled down, mapped in 4 KiB units (4 per 16 KiB page).
fn sector_sata() -> Device {
    let mut c = DeviceConfig::preset("consumer-sata").unwrap();
    c.geometry.blocks_per_plane = 64;
    c.gc.high_watermark = 8;
    c.over_provisioning = 0.2;
    c.ftl.mapping_unit = 4096;
    Device::new(c).unwrap()
}

#[test]
fn four_unit_writes_share_one_page_program() {
    let mut d = sector_sata();
    for i in 0..4 {
        d.submit(cmd(i, Op::Write, i * 4096, 4096, Nanos::ZERO), Nanos::ZERO)
            .unwrap();
    }
    let done = run_until_idle(&mut d);
    assert_eq!(done.len(), 4);
    let stats = d.stats();
    assert_eq!(stats.ftl.pages_programmed, 1);
    assert_eq!(stats.ftl.host_pages_written, 4);
    assert!((stats.write_amplification_bytes() - 1.0).abs() < 1e-9);
    // One program (650 us), no flush timeout (1 ms).
    assert!(
        done.iter().all(|f| f.at < Nanos::from_micros(900)),
        "{done:?}"
    );
}

#[test]
fn a_lone_unit_waits_for_the_buffer_timeout_then_is_padded() {
    let mut d = sector_sata();
    d.submit(cmd(1, Op::Write, 0, 4096, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    let done = run_until_idle(&mut d);
    assert!(
        done[0].at > Nanos::from_micros(1000 + 650),
        "{:?}",
        done[0].at
    );
    let stats = d.stats();
    assert_eq!(stats.ftl.units_padded, 3);
    assert!((stats.write_amplification_bytes() - 4.0).abs() < 1e-9);
}

#[test]
fn a_flush_programs_a_partly_filled_page_at_once() {
    let mut d = sector_sata();
    d.submit(cmd(1, Op::Write, 0, 8192, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    d.submit(cmd(2, Op::Flush, 0, 0, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    let done = run_until_idle(&mut d);
    let write = done.iter().find(|f| f.command.op == Op::Write).unwrap();
    assert!(write.at < Nanos::from_micros(900), "{:?}", write.at);
    assert_eq!(d.stats().ftl.units_padded, 2);
}

#[test]
fn units_of_one_page_read_as_one_page() {
    let mut d = sector_sata();
    d.submit(cmd(1, Op::Write, 0, 16384, Nanos::ZERO), Nanos::ZERO)
        .unwrap();
    let t = run_until_idle(&mut d)[0].at;
    d.submit(cmd(2, Op::Read, 4096, 8192, t), t).unwrap();
    run_until_idle(&mut d);
    assert_eq!(d.stats().host_pages_read, 1);
}
