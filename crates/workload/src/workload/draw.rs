//! Drawing a synthetic job's next request: its class, size and offset.

use iosteer_sched::{Nanos, Op};
use rand::rngs::SmallRng;
use rand::Rng;

use super::random_map::{self, RandomMap};
use super::{Generator, JobKind, Planned, ShapedState, Synthetic};
use crate::distribution::Distribution;
use crate::job_shape::{FileService, JobShape, StridedZones};

/// The index of `op`'s direction: read 0, write 1 (a flush with them),
/// trim 2.
fn direction_of(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write | Op::Flush => 1,
        Op::Trim => 2,
    }
}

/// The direction every request of `s` takes, if one does.
fn only_direction(s: &Synthetic) -> Option<usize> {
    match (s.trim, s.read_percent) {
        (true, _) => Some(2),
        (false, 100) => Some(0),
        (false, 0) => Some(1),
        _ => None,
    }
}

/// A synthetic job's next class: trim, or read with its read percentage.
fn draw_op(rng: &mut SmallRng, s: &Synthetic) -> Op {
    if s.trim {
        Op::Trim
    } else if rng.random_range(0..100) < s.read_percent {
        Op::Read
    } else {
        Op::Write
    }
}

impl Generator {
    /// Draws the next request of a synthetic job (size, offset, class).
    pub(super) fn draw(&mut self, now: Nanos) -> Planned {
        if !self.job.shape.draws_plainly() {
            return self.draw_shaped(now);
        }
        let JobKind::Synthetic(s) = &self.job.kind else {
            unreachable!()
        };
        // A sequential mix walks each direction on its own, as fio does:
        // its class comes first (the other jobs draw it last, as before).
        let early_op = if s.sequential && only_direction(s).is_none() {
            let drawn = draw_op(&mut self.rng, s);
            Some(self.rated(drawn, now))
        } else {
            None
        };
        let direction = early_op.map_or(only_direction(s).unwrap_or(0), direction_of);
        let len = if s.block_min == s.block_max {
            s.block_min
        } else {
            // A sequential request fits from the cursor (see
            // `sequential_room`); with less than a block left it wraps.
            let left = s.size.saturating_sub(self.cursors[direction]);
            let top = match s.sequential && left >= s.block_min {
                true => s.block_max.min(left),
                false => s.block_max,
            };
            let steps = (top - s.block_min) / s.align;
            s.block_min + self.rng.random_range(0..=steps) * s.align
        };
        let span = s.size.saturating_sub(len);
        let offset = if s.sequential {
            let cursor = &mut self.cursors[direction];
            if *cursor + len > s.size {
                *cursor = 0;
                self.trimmed_up_to = s.offset;
            }
            let at = s.offset + *cursor;
            *cursor += len;
            at
        } else {
            s.offset + self.rng.random_range(0..=span / s.align) * s.align
        };
        let op = match early_op {
            Some(op) => op,
            None => {
                let drawn = draw_op(&mut self.rng, s);
                self.rated(drawn, now)
            }
        };
        Planned { op, offset, len }
    }

    /// [`draw`](Self::draw) for a job with fio's finer shapes: the class
    /// first (block sizes may differ by direction), then the size, the file
    /// (round robin) and the offset in it.
    /// What a request may take of the job's one file: a sequential one
    /// fits from where the file's cursor is, as fio draws only sizes that
    /// fit from its offset (`io_u_fits`: `rw=write bsrange=8k-24k
    /// size=64k` ends its pass with the 8 KiB that are left, not a block
    /// wrapped to the start); with less than the smallest block left, the
    /// file starts over. `room` is the file's size; other jobs take it.
    fn sequential_room(&self, room: u64, blocks_index: usize, direction: usize) -> u64 {
        let JobKind::Synthetic(s) = &self.job.kind else {
            return room;
        };
        let shape = &self.job.shape;
        if !plain_sequence(s, shape) || shape.files.count() != 1 {
            return room;
        }
        let smallest = shape
            .blocks
            .as_ref()
            .map_or(s.block_min, |b| b[blocks_index].smallest());
        let cursor = self.shaped.file_cursors.first().map_or(0, |c| c[direction]);
        let left = room.saturating_sub(cursor);
        if left >= smallest.max(1) {
            left
        } else {
            room
        }
    }

    fn draw_shaped(&mut self, now: Nanos) -> Planned {
        let JobKind::Synthetic(s) = &self.job.kind else {
            unreachable!()
        };
        let drawn = draw_op(&mut self.rng, s);
        let op = self.rated(drawn, now);
        let JobKind::Synthetic(s) = &self.job.kind else {
            unreachable!()
        };
        let shape = &self.job.shape;
        let direction = direction_of(op);
        // fio's `bs_is_seq_rand` sizes a request by whether it is random,
        // so that is drawn first (a follow-on of `rw=randread:N` is not).
        let by_randomness = shape.blocks_by_randomness && !s.sequential;
        let picked_random = (by_randomness && self.shaped.run_left == 0)
            .then(|| random_pick(&mut self.rng, shape, direction));
        let blocks_index = match (shape.blocks_by_randomness, picked_random) {
            (false, _) => direction,
            (true, random) => usize::from(random == Some(true)),
        };
        // A request fits in its file, as fio draws only sizes that do (a
        // block larger than a file of the job would reach past it, past the
        // region and, at the drive's end, past the drive).
        let files = shape.files.count();
        let room = s.size / files / s.align * s.align;
        let fitting = self.sequential_room(room, blocks_index, direction);
        let mut len = match &shape.blocks {
            Some(blocks) => blocks[blocks_index].draw_fitting(&mut self.rng, fitting),
            None if s.block_min == s.block_max => s.block_min,
            None => {
                let top = s.block_max.min(fitting).max(s.block_min);
                let steps = (s.block_max - s.block_min) / s.align;
                let len = s.block_min + self.rng.random_range(0..=steps) * s.align;
                if len <= top {
                    len
                } else {
                    s.block_min + self.rng.random_range(0..=(top - s.block_min) / s.align) * s.align
                }
            }
        };
        let file_size = room.max(len);
        let state = &mut self.shaped;
        if state.file_cursors.len() != files as usize {
            state.file_cursors = vec![[0; 3]; files as usize];
            state.follow_ons = vec![[FollowOn::default(); 3]; files as usize];
        }
        let map_unit = map_unit(s, shape);
        if let Some(unit) = map_unit {
            if state.random_maps.len() != files as usize {
                state.random_maps = vec![RandomMap::new((room / unit).max(1)); files as usize];
            }
        }
        let drawn = FileDraw {
            service: &shape.files.service,
            files,
            len,
            file_size,
            direction,
        };
        let mut file = next_file(state, &mut self.rng, &drawn);
        if plain_sequence(s, shape) && shape.files.service.draws_uniformly() {
            file = undone_file(state, &mut self.rng, &drawn, file);
        }
        if map_unit.is_some() && !shape.random_map_renews {
            // A file whose pass is over is done: the next with blocks left
            // takes its turn.
            let open = (0..files as usize)
                .map(|k| (file + k) % files as usize)
                .find(|&f| !state.random_maps[f].is_full());
            file = open.unwrap_or(file);
        }
        let file_start = shape.files.start(file, s.offset, file_size);
        let random_align = shape.random_align.map_or(s.align, |a| a[direction]);
        // The part of the file the request goes to: all of it, or its zone.
        let (lo, hi) = match shape.zones {
            Some(zones) => {
                state
                    .zone
                    .window(zones, file_size, &mut state.file_cursors[file][direction])
            }
            None => (0, file_size),
        };
        // A zone narrower than the request (or cut by the file's end) is
        // widened back from its end to hold it.
        let hi = hi.max((lo + len).min(file_size));
        let lo = lo.min(hi - len);
        let random_slots = (hi - lo - len) / random_align + 1;
        let offset = if s.sequential {
            // A sequential request may cross its zone's end, as fio's does
            // (the zone's `window` brings the cursor back to its start once
            // past it): only the file's end bounds it.
            let cursor = &mut state.file_cursors[file][direction];
            if *cursor + len > file_size {
                *cursor = lo;
            }
            let at = *cursor;
            // fio's `rw=write:N`: the next request starts N bytes after this
            // one ends (not rounded: `write:2k` with 8 KiB blocks goes 0,
            // 10240, 20480); past the end it starts again at the file's
            // start, and backwards past the start at the end less N.
            let next = (at + len) as i64 + shape.offset_add;
            *cursor = if (lo as i64..file_size as i64).contains(&next) {
                next as u64
            } else if shape.offset_add > 0 {
                state.pass_over |= shape.ends_at_pass_end;
                lo
            } else {
                (hi as i64 + shape.offset_add).max(lo as i64) as u64
            };
            file_start + at
        } else if state.run_left > 0 {
            state.run_left -= 1;
            let follow_on = &mut state.follow_ons[file][direction];
            let at = follow_on.next(shape.same_offset);
            follow_on.went(at, len, file_size);
            file_start + at
        } else {
            let random =
                picked_random.unwrap_or_else(|| random_pick(&mut self.rng, shape, direction));
            let at = match map_unit {
                // fio's random map: each block once a pass. A request that
                // follows on takes no block of it and is not cut, as fio
                // marks none (`IO_U_F_BUSY_OK`).
                Some(unit) if random => {
                    let (at, taken) =
                        random_map::place(&mut state.random_maps[file], &mut self.rng, unit, len);
                    state.requests_cut_by_map += u64::from(taken < len);
                    len = taken;
                    if !shape.random_map_renews && state.random_maps.iter().all(RandomMap::is_full)
                    {
                        state.maps_fill = true;
                    }
                    at
                }
                _ if random => {
                    lo + shape.distribution.draw(&mut self.rng, random_slots) * random_align
                }
                _ => state.follow_ons[file][direction]
                    .next(false)
                    .min(file_size - len),
            };
            state.run_left = shape.ios_per_offset.saturating_sub(1);
            state.follow_ons[file][direction].went(at, len, file_size);
            file_start + at
        };
        state.zone.moved += len;
        Planned { op, offset, len }
    }
}

/// Where a job of strided zones is: its zone's start in the file and the
/// bytes moved there.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ZoneCursor {
    start: u64,
    moved: u64,
}

impl ZoneCursor {
    /// The part of a file of `file_size` bytes the next request goes to,
    /// `[lo, hi)`: the next zone once this one has had its bytes, back at
    /// the file's start past its end, as fio's `setup_strided_zone_mode`
    /// moves. `cursor`, the sequential position, goes to the zone's start
    /// as a zone begins, at each `range` bytes moved, and past its end.
    pub(super) fn window(
        &mut self,
        zones: StridedZones,
        file_size: u64,
        cursor: &mut u64,
    ) -> (u64, u64) {
        if self.moved >= zones.size {
            self.moved = 0;
            // A stride past the end of the address space is past the file's.
            self.start = self
                .start
                .saturating_add(zones.range.saturating_add(zones.skip));
            if self.start >= file_size {
                self.start = 0;
            }
        }
        if *cursor < self.start
            || *cursor >= self.start.saturating_add(zones.range)
            || self.moved % zones.range == 0
        {
            *cursor = self.start;
        }
        (
            self.start,
            self.start.saturating_add(zones.range).min(file_size),
        )
    }
}

/// Where a random job's next request that draws no offset goes, in one
/// file and direction: fio keeps the last request's start (`last_start`)
/// and the offset after it (`last_pos`) per file and direction, so a mix's
/// reads follow on from its last read and its writes from its last write
/// (fio 3.33, `rw=randrw bs=4k percentage_random=0`: reads at 0, 4k, 8k...
/// and writes at 0, 4k, 8k...; `rw=randrw:4`: the first write that follows
/// on goes to 0). Before the file's first request, its start.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct FollowOn {
    /// The last request's offset in the file and the next one's.
    last: Option<(u64, u64)>,
}

impl FollowOn {
    /// Where the next request goes: after the last one, or at it again
    /// (`again`: a follow-on of `rw_sequencer=identical`; a new pick that
    /// is not random goes after it, as fio's `last_pos`).
    fn next(self, again: bool) -> u64 {
        match self.last {
            None => 0,
            Some((start, _)) if again => start,
            Some((_, next)) => next,
        }
    }

    /// A request of `len` bytes went at `at`: the next follows it, or
    /// starts the file again when one as long would pass its end.
    fn went(&mut self, at: u64, len: u64, file_size: u64) {
        let next = if at + 2 * len > file_size {
            0
        } else {
            at + len
        };
        self.last = Some((at, next));
    }
}

/// The block of fio's random map of a job that keeps one
/// ([`JobShape::random_map`]): the offsets' alignment, which must be one
/// for every direction the job issues (fio's map counts in its smallest
/// block, and a job whose reads and writes align apart draws as without
/// it); `None` for a job without the map, or of strided zones.
pub(crate) fn map_unit(s: &Synthetic, shape: &JobShape) -> Option<u64> {
    if !shape.random_map || s.sequential || shape.zones.is_some() {
        return None;
    }
    match shape.random_align {
        None => Some(s.align),
        Some(align) if s.trim => Some(align[2]),
        Some(align) if s.read_percent == 100 => Some(align[0]),
        Some(align) if s.read_percent == 0 => Some(align[1]),
        Some(align) => (align[0] == align[1]).then_some(align[0]),
    }
    .filter(|&unit| unit > 0)
}

/// Whether a random job's next request (not a follow-on) in `direction`
/// goes to a random offset: fio's `percentage_random`.
fn random_pick(rng: &mut SmallRng, shape: &JobShape, direction: usize) -> bool {
    shape
        .percentage_random
        .is_none_or(|p| rng.random_range(0..100) < p[direction])
}

/// The file (index) of the next request as fio's `file_service_type`
/// chooses it for the request `drawn`.
fn next_file(state: &mut ShapedState, rng: &mut SmallRng, drawn: &FileDraw) -> usize {
    let FileDraw {
        files,
        len,
        file_size,
        ..
    } = *drawn;
    match drawn.service {
        FileService::RoundRobin { every } => {
            if state.file_left == 0 {
                state.current_file = state.next_file;
                state.next_file = (state.next_file + 1) % files as usize;
                state.file_left = *every;
            }
        }
        FileService::Drawn {
            distribution,
            every,
            hottest_at_random,
        } => {
            if state.file_left == 0 {
                // fio's `rand_off`: drawn once a job, where no center is.
                let start = match hottest_at_random {
                    true => *state
                        .hottest_range
                        .get_or_insert_with(|| rng.random_range(0..files << RANGE_SHIFT)),
                    false => 0,
                };
                state.current_file = drawn_file(rng, distribution, files, start);
                state.file_left = *every;
            }
        }
        FileService::Sequential => {
            let file = state.current_file % files as usize;
            state.file_moved += len;
            if state.file_moved >= file_size {
                (state.current_file, state.file_moved) = ((file + 1) % files as usize, 0);
            }
            return file;
        }
    }
    state.file_left -= 1;
    state.current_file
}

/// fio draws a file by a distribution as one of 1024 ranges a file
/// (`FIO_FSERVICE_SHIFT`).
const RANGE_SHIFT: u32 = 10;

/// The file `distribution` draws as fio draws it (its `__get_next_file`
/// with `zipf_next`, `pareto_next` or `gauss_next`, unhashed): one of the
/// files' ranges, its ranks laid from the range `start` upwards (wrapping;
/// the distribution's center adds to it), and the file that range is in.
/// The hottest ranks of zipf and pareto so fill the file they start in,
/// to its last range, before the next file in turn gets any. fio 3.33,
/// `rw=write bs=4k size=4m nrfiles=8 file_service_type=zipf:1.2`: 932
/// writes to one file, then 35, 18, 16, 8, 6, 2 and 7 to the files after
/// it in turn (by seed 780 to 932 to the first, the rest mostly to the
/// next), where a zipf over the 8 files themselves gave 419, 180, 126,
/// 93, 68, 55, 51 and 32.
fn drawn_file(rng: &mut SmallRng, distribution: &Distribution, files: u64, start: u64) -> usize {
    let ranges = files << RANGE_SHIFT;
    let range = (distribution.draw(rng, ranges) + start) % ranges;
    (range >> RANGE_SHIFT) as usize
}

/// A job walks each file from its start to its end: it is sequential,
/// without holes (`rw=write:N`) or strided zones.
fn plain_sequence(s: &Synthetic, shape: &JobShape) -> bool {
    s.sequential && shape.offset_add == 0 && shape.zones.is_none()
}

/// The files of a pass that are done (fio's `fio_file_done`).
#[derive(Clone, Debug, Default)]
pub(super) struct DoneFiles {
    done: Vec<bool>,
}

impl DoneFiles {
    fn is_done(&self, file: usize) -> bool {
        self.done.get(file).copied().unwrap_or(false)
    }

    /// Marks `file` of `files` done; whether every one now is.
    fn mark(&mut self, file: usize, files: usize) -> bool {
        if self.done.len() != files {
            self.done = vec![false; files];
        }
        self.done[file] = true;
        self.done.iter().all(|&done| done)
    }
}

/// The request a file is drawn for: the job's service and file count,
/// the request's length and direction, and the files' size.
struct FileDraw<'a> {
    service: &'a FileService,
    files: u64,
    len: u64,
    file_size: u64,
    direction: usize,
}

/// A sequential job's file as fio draws it uniformly (`random[:N]`):
/// `file`, drawn, unless it is done (its next request would pass its end:
/// it has moved its share of the pass), when the draw goes again among
/// the others, its N requests anew, as fio's `set_io_u_file` marks the
/// file done and draws again. Once every file is done the pass is over
/// and each starts again, as at fio's next loop. fio 3.33, `rw=write
/// nrfiles=3 size=3m file_service_type=random`: 256 writes to each file,
/// each block once (drawn among all files: 265, 259 and 244, 12 blocks
/// twice and 12 never).
fn undone_file(
    state: &mut ShapedState,
    rng: &mut SmallRng,
    drawn: &FileDraw,
    mut file: usize,
) -> usize {
    loop {
        let room = state.file_cursors[file][drawn.direction] + drawn.len <= drawn.file_size;
        if room && !state.files_done.is_done(file) {
            return file;
        }
        if state.files_done.mark(file, drawn.files as usize) {
            state.files_done = DoneFiles::default();
            state.file_cursors.fill([0; 3]);
            return file;
        }
        state.file_left = 0;
        file = next_file(state, rng, drawn);
    }
}

/// fio's `serialize_overlap`: a job's requests in flight, and whether its
/// next request waits for one of them to complete.
#[derive(Clone, Debug, Default)]
pub(super) struct Overlaps {
    /// Request id, first byte and first byte past it.
    in_flight: Vec<(u64, u64, u64)>,
    pub(super) held: bool,
}

impl Overlaps {
    /// Whether a request of `len` bytes at `offset` overlaps one in flight:
    /// fio then holds it (its queue reports busy) until a completion, and
    /// tries it again.
    pub(super) fn hold(&mut self, offset: u64, len: u64) -> bool {
        let end = offset + len;
        self.held = self
            .in_flight
            .iter()
            .any(|&(_, a, b)| offset < b && a < end);
        self.held
    }

    pub(super) fn issued(&mut self, id: u64, offset: u64, len: u64) {
        self.in_flight.push((id, offset, offset + len));
    }

    pub(super) fn completed(&mut self, id: u64) {
        self.in_flight.retain(|&(issued, _, _)| issued != id);
        self.held = false;
    }
}
