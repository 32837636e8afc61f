//! Inputs the fuzz targets found, minimized, each with the behavior the fix
//! gave it.

use iosteer_workload::trace::{self, Devices, Options, TimeUnit, TraceFormat};

/// Devices laid side by side: an address at the top of `u64` overflowed the
/// alignment of the next device's base (`attempt to multiply with overflow`
/// in `device_bases`; a wrapped, overlapping base in release).
#[test]
fn a_device_ending_at_the_top_of_the_address_space_saturates_the_next_base() {
    let text = "0,18446744073709551615,8192,W,0.5\n1,8,4096,R,0.6\n";
    let options = Options {
        unit: TimeUnit::S,
        devices: Devices::Separate,
        ..Options::default()
    };
    let read = trace::read(text.as_bytes(), "t.spc", TraceFormat::Spc, &options).unwrap();
    let second = read
        .records
        .iter()
        .find(|r| r.op != read.records[0].op)
        .unwrap();
    assert!(
        second.offset >= 1 << 60,
        "device 1 placed at {}",
        second.offset
    );
}
