//! fio's strided zones ([`crate::fio::zones`]).

use super::*;

#[test]
fn a_blank_zone_range_is_the_rest_of_the_region() {
    let blank = jobs_of("[a]\nrw=randread\nsize=1m\nrandom_distribution=zoned:70/10:30/\n");
    let full = jobs_of("[a]\nrw=randread\nsize=1m\nrandom_distribution=zoned:70/10:30/90\n");
    assert_eq!(blank[0].shape.distribution, full[0].shape.distribution);
}

/// The offsets, in KiB, of the requests of a job of 4 KiB reads of a
/// 64 KiB file (sequential unless `zones` gives another `rw`) with strided
/// zones `zones`.
fn zone_offsets_kib(zones: &str) -> Vec<u64> {
    let text = format!("[z]\nrw=read\nbs=4k\nsize=64k\nzonemode=strided\n{zones}\n");
    let job = jobs_of(&text).remove(0);
    let requests = crate::workload::Generator::new(job, 0, 1).requests_unloaded();
    requests.iter().map(|r| r.offset.0 / 1024).collect()
}

/// fio 3.33's strided zones, request by request (`--write_iolog` of psync
/// on a 64 KiB file, offsets in KiB): a zone until `zonesize` bytes moved,
/// then on by `zonerange + zoneskip`, back to the start past the end; a
/// zone smaller than `zonesize` is gone round again; a request crosses a
/// zone's end when the zone is not a multiple of the block (it goes back
/// to the zone's start only once past it); on a new file fio makes it
/// offset + size long, and the zones wrap there; random offsets stay in
/// the zone.
#[test]
fn strided_zones_move_as_fios() {
    let cases: [(&str, &[u64]); 7] = [
        (
            "zonesize=8k\nzoneskip=8k",
            &[0, 4, 16, 20, 32, 36, 48, 52, 0, 4, 16, 20, 32, 36, 48, 52],
        ),
        (
            "zonesize=16k\nzonerange=8k\nzoneskip=8k",
            &[0, 4, 0, 4, 16, 20, 16, 20, 32, 36, 32, 36, 48, 52, 48, 52],
        ),
        (
            "zonesize=8k\nzoneskip=16k\nio_size=40k",
            &[0, 4, 24, 28, 48, 52, 0, 4, 24, 28],
        ),
        (
            "zonesize=12k\nzonerange=24k",
            &[0, 4, 8, 24, 28, 32, 48, 52, 56, 0, 4, 8, 24, 28, 32, 48],
        ),
        (
            "zonesize=8k\nzoneskip=8k\noffset=16k\nsize=32k",
            &[16, 20, 32, 36, 16, 20, 32, 36],
        ),
        (
            "zonesize=6k",
            &[0, 4, 6, 10, 12, 16, 18, 22, 24, 28, 30, 34, 36, 40, 42, 46],
        ),
        (
            "zonesize=12k\nzonerange=6k",
            &[0, 4, 0, 6, 10, 6, 12, 16, 12, 18, 22, 18, 24, 28, 24, 30],
        ),
    ];
    for (zones, fio) in cases {
        assert_eq!(zone_offsets_kib(zones), fio, "{zones}");
    }
    // fio: 0 8 28 20 36 44 52 56 12 0 28 24 44 32 52 56 (its own draws).
    let random = zone_offsets_kib("rw=randread\nzonesize=8k\nzonerange=16k");
    assert_eq!(random.len(), 16);
    for (i, kib) in random.iter().enumerate() {
        let zone = (i / 2) % 4;
        assert!(
            (zone as u64 * 16..zone as u64 * 16 + 16).contains(kib),
            "{i}: {random:?}"
        );
    }
}

#[test]
fn zone_options_are_checked_as_fio_checks_them() {
    let refused = |text: &str, says: &str| assert_refused(text, "z.fio", &[says]);
    refused("[z]\nrw=read\nzonemode=strided\n", "needs a zonesize");
    refused(
        "[z]\nrw=read\nzonemode=none\nzonesize=1m\n",
        "not compatible",
    );
    refused(
        "[z]\nrw=read\nzonemode=zbd\nzonesize=1m\n",
        "zoned drives are not modelled",
    );
    // fio 3.33 issues no read of a random job whose zone holds no block.
    refused(
        "[z]\nrw=randread\nbs=4k\nzonemode=strided\nzonesize=2k\n",
        "holds no block of 4096 bytes",
    );
    let file = file_of;
    let alone = file("[z]\nrw=read\nsize=64m\nzonesize=1m\nzoneskip=1m\n");
    assert!(alone.jobs[0].shape.zones.is_some());
    assert_noted(&alone, "later fio releases");
    let many = file("[z]\nrw=read\nsize=64m\nnrfiles=2\nzonemode=strided\nzonesize=1m\n");
    assert!(many.jobs[0].shape.zones.is_none());
    assert_noted(&many, "one file");
    // A random job's last zone, cut by the file's end, is said to differ.
    let cut = file("[z]\nrw=randread\nsize=64k\nbs=4k\nzonemode=strided\nzonesize=24k\n");
    assert_noted(&cut, "zone at 49152 runs past");
    let seq =
        file("[z]\nrw=read\nsize=64k\nbs=4k\nzonemode=strided\nzonesize=12k\nzonerange=24k\n");
    assert!(seq.notes.is_empty(), "{:?}", seq.notes);
}

/// A zone stride past the end of the address space (zonerange plus
/// zoneskip over 2^64) is past the file's end: the job stays in its first
/// zone, as fio's does, where it overflowed.
#[test]
fn a_zone_stride_past_the_address_space_goes_back_to_the_start() {
    let skip = "zonesize=8k\nzonerange=0xF000000000000000\nzoneskip=0xF000000000000000";
    assert_eq!(zone_offsets_kib(skip), [0, 4].repeat(8));
    // The check of the last zone against the file's end adds them too.
    let random = "[z]\nrw=randread\nsize=64k\nzonemode=strided\n";
    assert!(file_of(&format!("{random}{skip}\n")).jobs[0]
        .shape
        .zones
        .is_some());
}
