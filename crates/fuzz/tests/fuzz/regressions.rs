//! Inputs the fuzz targets found, minimized, each with the behavior the fix
//! gave it.

use iosteer_workload::fio;
use iosteer_workload::trace::{self, Devices, Options, TimeUnit, TraceFormat};
use iosteer_workload::workload::JobKind;

/// Devices laid side by side: an address at the top of `u64` overflowed the
/// alignment of the next device's base (`attempt to multiply with overflow`
/// in `device_bases`; a wrapped, overlapping base in release). The fuzzer's
/// sector, `u64::MAX`, is now refused (its bytes pass 2^64); the highest
/// sector whose 8 KiB still end below 2^64 keeps the case. The next base
/// then saturated at 2^64 - 1, which laid device 1 past the end of the
/// address space; now the layout is refused, naming device 1.
#[test]
fn a_device_laid_after_one_ending_at_the_top_of_the_address_space_is_refused() {
    let text = "0,36028797018963951,8192,W,0.5\n1,8,4096,R,0.6\n";
    let options = Options {
        unit: TimeUnit::S,
        devices: Devices::Separate,
        ..Options::default()
    };
    let err = trace::read(text.as_bytes(), "t.spc", TraceFormat::Spc, &options).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "t.spc: device 1 ends 8192 bytes into it, and laid after the devices before it \
             (each in a range of its own) from byte 18446744073709551616"
        ),
        "{err}"
    );
}

/// On a drive of `u64::MAX` bytes, a job's end past the top of `u64`
/// saturated to the capacity and passed as fitting (the fio target: a copy
/// shifted by `offset_increment`, and `offset=100%` with a size). A copy
/// without a size runs from its offset to the drive's end, as fio's does.
#[test]
fn a_job_past_the_top_of_the_address_space_is_refused() {
    let sized_at_the_end = "[fill]\nrw=write\nbs=128k\noffset=100%\nsize=10%\n";
    let huge_increment =
        "[a]\nrw=write\nbs=4k\nsize=1m\nnumjobs=3\noffset_increment=9223372036854775808\n";
    for text in [sized_at_the_end, huge_increment] {
        assert!(fio::parse(text, "t.fio", u64::MAX).is_err(), "{text}");
    }
    let shifted_copy = "[increments]\nrw=write\nbs=64k\nnumjobs=2\noffset_increment=4m\n";
    for capacity in [u64::MAX, 1 << 30] {
        let jobs = fio::parse(shifted_copy, "t.fio", capacity).unwrap();
        for job in &jobs {
            let JobKind::Synthetic(s) = &job.kind else {
                panic!("not synthetic")
            };
            let end = s.offset.checked_add(s.size);
            assert!(end.is_some_and(|end| end <= capacity), "{capacity}: {s:?}");
        }
    }
}
