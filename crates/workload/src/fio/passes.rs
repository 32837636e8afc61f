//! How much of its region a job moves in a pass, as fio ends one: holes,
//! a sequential mix's directions, and files that do not end on a block.

use super::*;

/// fio ends a sequential job with holes (`rw=read:4k`) after one pass over
/// its region, unless `io_size` asks for more, except where the region is
/// its whole file (it starts at 0 and ends with the file: a file fio
/// creates at `size`, or a device from its start to its end), the pass's
/// last request ends short of the file's end and the hole after it
/// reaches it: fio then wraps and moves `size` bytes, as iosteer does for
/// every other job (`rw=read:4k bs=4k` wraps; `rw=write:2k bs=8k` on
/// 64 KiB stops after six writes, the next position 61,440; `rw=read:8k
/// bs=4k` on 1 MiB stops after 86 reads, the last one ending with the file,
/// where fio's position is past the file and it does not wrap). `file_end` is where the job's
/// file ends ([`JobSpec::file_end`]). So: the bytes of one pass, walked in
/// strides of a block and its hole (the mean block when the sizes vary, so
/// then about that); `None` when the job wraps, has no holes or mixes reads
/// and writes, whose directions fio walks each on its own.
pub(super) fn one_pass_bytes(s: &Synthetic, shape: &JobShape, file_end: u64) -> Option<u64> {
    let whole_file = s.offset == 0 && s.size >= file_end;
    let direction = only_direction(s.read_percent, s.trim)?;
    if !s.sequential || shape.offset_add <= 0 {
        return None;
    }
    let block = shape
        .blocks
        .as_ref()
        .map_or((s.block_min + s.block_max) as f64 / 2.0, |b| {
            // `bs_is_seq_rand`: sequential requests take the read sizes.
            b[if shape.blocks_by_randomness {
                0
            } else {
                direction
            }]
            .mean()
        });
    // Each file's region as the generator walks it (fio walks each file on
    // its own: `nrfiles=2 size=80k rw=write:8k` makes 4 writes in each);
    // whether fio wraps, against the file's length as it is (`bs=12k
    // size=64k rw=write:4k` wraps at 60k).
    let files = shape.files.count();
    let region = (s.size / files / s.align * s.align) as f64;
    let file = (file_end / files) as f64;
    let stride = block + shape.offset_add as f64;
    let strides = ((region - block).max(0.0) / stride).floor();
    let last_end = strides * stride + block;
    let wraps = whole_file && last_end < file && last_end + shape.offset_add as f64 >= file;
    (!wraps).then(|| ((strides + 1.0) * block).round() as u64 * files)
}

/// Whether a sequential mix of reads and writes with holes ends when one
/// direction's pass reaches the region's end, as fio's does (its next
/// offset there fails: `rw=readwrite:8k bs=4k size=16m` made 1,304 reads
/// and 1,366 writes, the writes' pass over); where [`one_pass_bytes`]
/// says one direction would wrap instead, it wraps.
pub(super) fn mix_ends_at_pass(s: &Synthetic, shape: &JobShape, file_end: u64) -> bool {
    let mixed = !s.trim && only_direction(s.read_percent, s.trim).is_none();
    let reads_alone = Synthetic {
        read_percent: 100,
        ..s.clone()
    };
    mixed && one_pass_bytes(&reads_alone, shape, file_end).is_some()
}

/// What fio moves of a region whose files do not end on a block: only
/// whole blocks. A random job held by its random map
/// ([`JobShape::random_map_holds_bytes`]) takes each of the map's blocks
/// (a file's bytes over the smallest block, rounded down) once and ends; a
/// sequential one of one direction, without
/// holes, stops where its next block would run past the end of its file
/// (fio 3.33: `rw=read bs=4000 size=1m`, and `randread`, 262 reads;
/// `bs=4k size=1m nrfiles=3`, files of 349,525 bytes, 255). The region's
/// bytes otherwise (a mix of sequential reads and writes goes past: fio's
/// `rw=rw bs=4000 size=1m` issues 263).
pub(super) fn whole_blocks(s: &Synthetic, shape: &JobShape, file_end: u64) -> u64 {
    let files = shape.files.count();
    let per_file = s.size / files;
    let random_map = !s.sequential && shape.random_map_holds_bytes();
    let ends_with_file = s.sequential
        && shape.offset_add == 0
        && only_direction(s.read_percent, s.trim).is_some()
        && s.offset.saturating_add(s.size) >= file_end;
    // The blocks of the direction issued (fio 3.33, `rw=write bs=4k,8000`
    // on 8 MiB: 1048 writes of 8000 bytes), of any direction for a mix.
    let block = match (only_direction(s.read_percent, s.trim), &shape.blocks) {
        (Some(direction), Some(blocks)) => blocks[direction].smallest(),
        _ => s.block_min,
    };
    if (random_map || ends_with_file) && block > 0 {
        per_file / block * block * files
    } else {
        s.size
    }
}
