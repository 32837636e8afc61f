//! What fio job files add to a job beyond [`Synthetic`](crate::workload::Synthetic):
//! when it ends (bytes or I/Os, fio's `size`/`io_size`/`number_ios`), which
//! jobs it waits for (`stonewall`, `wait_for`), its ramp, and the finer
//! shape of its I/O (`bssplit`, `random_distribution`, `rw=...:N`, files,
//! flushes). [`JobShape::default()`] is a plain job: jobs built in code use
//! it and behave, draw for draw, as they always did.

use iosteer_sched::Nanos;

use crate::bssplit::BlockSplit;
use crate::depth_search::LatencyTarget;
use crate::distribution::Distribution;
use crate::flow::FlowWeight;
use crate::steady_state::SteadyState;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct JobShape {
    /// The job-file section the job came from (numjobs copies share it);
    /// phases are named after it. Empty: the job's name.
    pub section: String,
    /// Stop issuing once this many bytes were issued (fio's `size` or
    /// `io_size` without `time_based`, times `loops`).
    pub bytes_limit: Option<u64>,
    /// Stop issuing after this many requests past the ramp (fio's
    /// `number_ios`, which counts from the end of `ramp_time`).
    pub ios_limit: Option<u64>,
    /// Indices (in the job list) of the jobs that must have ended, their
    /// last request completed, before this one starts (fio's `stonewall`
    /// and `wait_for`). The job's `start` and `stop` then count from then.
    pub after: Vec<usize>,
    /// Time after its start before the job's requests count in the figures
    /// (fio's `ramp_time`).
    pub ramp: Nanos,
    /// Block sizes per direction (read, write, trim), when not the plain
    /// `block_min..=block_max` of the job.
    pub blocks: Option<[BlockSplit; 3]>,
    /// fio's rate keeps its schedule: an arrival held back by the iodepth
    /// is issued as soon as the job is freed and the next is due one gap
    /// after it was (fio's `usec_for_io` counts from the job's start), so
    /// the job catches up. A scenario's job resumes from when it was freed.
    pub rate_catches_up: bool,
    /// fio's `bs_is_seq_rand`: `blocks[0]` sizes the sequential requests
    /// and `blocks[1]` the random ones, whatever their direction.
    pub blocks_by_randomness: bool,
    /// Where random offsets fall.
    pub distribution: Distribution,
    /// Share of a random job's requests at random offsets (the rest follow
    /// on sequentially), percent, per direction (read, write, trim); fio's
    /// `percentage_random`. `None`: 100 in every direction the job issues.
    pub percentage_random: Option<[u32; 3]>,
    /// Boundaries random offsets fall on, per direction (read, write,
    /// trim), when not the job's block alignment (fio's `blockalign`).
    pub random_align: Option<[u64; 3]>,
    /// Sequential: bytes added after each request (fio's `rw=write:N`):
    /// holes when positive, backwards when below minus the block size.
    pub offset_add: i64,
    /// A sequential mix with holes ends when one direction's pass reaches
    /// the end of its region, as fio's (its next offset there fails).
    pub ends_at_pass_end: bool,
    /// Random: requests per new random offset (fio's `rw=randread:N`); the
    /// others follow on sequentially, or at the same offset when
    /// `same_offset` (fio's `rw_sequencer=identical`).
    pub ios_per_offset: u32,
    pub same_offset: bool,
    /// The files the region is cut into.
    pub files: FileSet,
    /// The job gave its size (`size`, `filesize`, `fill_device`): without
    /// one, a file `iosteer run` would create has no size.
    pub sized: bool,
    /// Closed loop: think after this many requests (fio's `thinktime_blocks`).
    pub thinktime_blocks: u32,
    /// A flush after every this many writes (fio's `fsync=N`).
    pub flush_every: Option<u32>,
    /// fio's `fdatasync=N`, counted apart from `fsync=N` as fio counts it.
    pub datasync_every: Option<u32>,
    /// A flush when the job stops issuing (fio's `end_fsync`).
    pub end_flush: bool,
    /// fio's `allow_file_create=0`: `iosteer run` refuses a file that is
    /// not there rather than create it.
    pub no_create: bool,
    /// fio's `fallocate=none` (or `0`, `truncate`): `iosteer run` leaves a
    /// file it creates or grows sparse instead of reserving its space.
    pub sparse: bool,
    /// Whether the job file asks for direct I/O (fio's `direct`, or
    /// `buffered` turned round; fio's default, `Some(false)`, is buffered);
    /// `None` for a job of no job file. `iosteer run` notes the jobs whose
    /// mode is not its own.
    pub direct: Option<bool>,
    /// fio's `sync`: whether every write is O_SYNC or O_DSYNC.
    pub write_sync: WriteSync,
    /// fio's `writefua` (sg and io_uring_cmd engines): every write carries FUA.
    pub write_fua: bool,
    /// fio's strided zones.
    pub zones: Option<StridedZones>,
    /// fio's `serialize_overlap`: a request that overlaps one of the job's
    /// in flight waits for a completion (and is then tried again).
    pub serialize_overlap: bool,
    /// fio's `trimwrite`: each write's blocks are trimmed first, and the
    /// write goes once that trim has completed (fio trims, then writes the
    /// block), so no trim a policy sends late lands on the new data.
    pub writes_after_trims: bool,
    /// fio's `create_only`: the job issues nothing.
    pub create_only: bool,
    /// fio's `verify` method (the data is not checked: `iosteer run
    /// --verify` checks its own).
    pub verify: Option<String>,
    /// fio's rounds, for a job of a job file that is not time based
    /// (`None`: the job issues until its limits, in one stream).
    pub rounds: Option<Rounds>,
    /// Bytes per second of reads, writes and trims below which fio would
    /// stop the job (`rate_min`, a floor per direction): the report notes a
    /// job that falls below one in a direction it issued.
    pub rate_min: [Option<f64>; 3],
    /// The same in requests per second (`rate_iops_min`).
    pub rate_iops_min: [Option<f64>; 3],
    /// fio's `rate` and `rate_iops` on a job that mixes reads and writes:
    /// bytes per second for reads and for writes, each direction capped on
    /// its own (`None`: uncapped), in place of the arrival's one rate. fio's
    /// choice: the drawn direction when it may go, else the other one when
    /// it may, else whichever may go first, when it may.
    pub direction_rates: Option<[Option<f64>; 2]>,
    /// fio's `max_latency` per direction (read, write, trim): the job stops
    /// issuing at the first request, completed after its ramp, that took
    /// longer ([`Generator::completed`](crate::workload::Generator::completed)).
    pub max_latency: [Option<Nanos>; 3],
    /// fio's `iodepth_low` and `iodepth_batch_complete_min`: how a full
    /// queue drains before the job fills it again ([`QueueDrain`]). `None`:
    /// it refills as each request completes (fio's default).
    pub queue_drain: Option<QueueDrain>,
    /// fio's random map: the job's random offsets take blocks not yet
    /// done this pass, shortening a request that runs into done ones. Off
    /// (offsets drawn with replacement) with `norandommap`, a non-uniform
    /// distribution, a `blockalign` other than the blocks, or
    /// `rw=randread:N`. A job of `percentage_random` keeps it (fio 3.33,
    /// `rw=randwrite bs=4k size=1m percentage_random=99`: 254 distinct
    /// blocks of 256): its requests that follow on take no block of it,
    /// as fio's are not marked (`IO_U_F_BUSY_OK`).
    pub random_map: bool,
    /// With the random map, a file whose pass is over starts a new pass
    /// at once (a time-based job, or files drawn by a non-uniform
    /// distribution, as fio resets the file); otherwise it is done until
    /// the job's next loop.
    pub random_map_renews: bool,
    /// fio's `latency_target` (with `latency_window`, `latency_percentile`
    /// and `latency_run`): the job searches the depth that keeps its
    /// latency under the target ([`crate::depth_search`]).
    pub latency_target: Option<LatencyTarget>,
    /// fio's `flow` (with `flow_id` and `flow_sleep`): the job's weight in
    /// a flow whose jobs keep their requests in the ratio of their weights
    /// ([`crate::flow`]).
    pub flow: Option<FlowWeight>,
    /// fio's steady state (`ss`, `ss_dur`, `ss_ramp`): the job stops once
    /// its last seconds of I/O look steady ([`crate::steady_state`]).
    pub steady_state: Option<SteadyState>,
    /// A trace job replayed as fio replays `read_iolog`: at most
    /// `iodepth` requests out, and the log's waits as fio takes them
    /// ([`IologPacing`]). `None`: a trace replays open loop, every request
    /// at its arrival.
    pub iolog_pacing: Option<IologPacing>,
}

/// How a full queue drains, as fio's `wait_for_completions` drains it:
/// once the queue is full (its I/O depth, or the depth a latency target
/// allows), fio reaps at least `batch` completions a call (all that are
/// out when fewer), and calls again while more than `low` are out. fio
/// 3.33 on a disk, `iodepth=32`, by the depths it submitted at:
/// `iodepth_low=16` fills from 16, `1` from 1,
/// `iodepth_batch_complete_min=8` from 24, both (`8`, `12`) from 8.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct QueueDrain {
    /// `iodepth_low` (fio's default, and 0: the I/O depth).
    pub low: u32,
    /// `iodepth_batch_complete_min`, at least 1.
    pub batch: u32,
}

impl QueueDrain {
    /// How few are out when the job fills the queue again, after it filled
    /// at `depth`.
    pub fn resume_at(self, depth: u32) -> u32 {
        let mut out = depth.saturating_sub(self.batch.min(depth));
        while out > self.low {
            out -= self.batch.min(out);
        }
        out
    }
}

/// How fio paces an iolog's replay: it never has more than `iodepth`
/// requests out, and it waits before a request only as long as the log
/// says and the I/O depth lets it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IologPacing {
    pub iodepth: u32,
    /// Version 3: a request's wait counts from when the one before it was
    /// issued (fio's `iolog_delay` against its last issue), so a request
    /// held by the I/O depth delays every later one by as much. Version 2:
    /// a `wait` is a time since the run's start, which a late replay does
    /// not wait for.
    pub waits_from_previous: bool,
}

impl JobShape {
    /// Whether the job's writes go to the drive FUA (fio's `sync`, or the
    /// `writefua` of the sg and io_uring_cmd engines).
    pub fn fua_writes(&self) -> bool {
        self.write_sync.fua() || self.write_fua
    }

    /// fio's random map holds this random job to its byte limit: every
    /// request takes blocks not yet done, so the job moves exactly `size`
    /// (`io_size`, times `loops`) in whole blocks of its files, the last
    /// request cut to the limit here, as a sequential job's is. Without
    /// the map, or with requests that follow on (`percentage_random`,
    /// which fio neither marks nor cuts), the last request goes whole,
    /// past the limit, as fio's does (fio 3.33, `rw=randwrite bs=12k
    /// size=512k percentage_random=90`: 43 writes, 528,384 bytes).
    pub fn random_map_holds_bytes(&self) -> bool {
        self.random_map && self.percentage_random.is_none()
    }

    /// No option changes how requests are drawn: the generator takes its
    /// original path (the same draws from the same seed).
    pub fn draws_plainly(&self) -> bool {
        self.blocks.is_none()
            && self.distribution == Distribution::Uniform
            && self.percentage_random.is_none()
            && self.offset_add == 0
            && self.ios_per_offset <= 1
            && self.files.is_plain()
            && self.random_align.is_none()
            && self.zones.is_none()
            && !self.random_map
    }
}

/// fio's rounds (its `thread_main` calling `do_io` once a loop): the job
/// moves `round_bytes` of its own requests, lets them complete, flushes
/// with `end_fsync`, reads back what it wrote if it verifies, and goes on
/// to the next round while it has loops left, or while the bytes it
/// completed fall short of `goal_bytes` (the `rounds` module of
/// [`crate::workload`] says how).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rounds {
    /// Bytes of its own requests a round moves (fio's `size`; its
    /// `io_size`, if more, for a random writer without the random map);
    /// a `verify_backlog`'s read-backs count in it.
    pub round_bytes: u64,
    /// After `loops` rounds, more go on while the bytes completed,
    /// read-backs included, fall short of this by a largest block (fio's
    /// `io_size`, else `size`)...
    pub goal_bytes: u64,
    pub loops: u64,
    /// ...unless the job has a `verify` method and no read-back (fio 3.33
    /// then stops after its loops), or its random map had every block of
    /// its files taken and the goal is `size`, not a given `io_size` (fio's
    /// files are done: `keep_running` ends the job short).
    pub past_loops: bool,
    /// fio's `io_size` was given.
    pub goal_given: bool,
    /// fio's read-back of what the job wrote (`verify` with `do_verify=1`).
    pub read_back: Option<ReadBack>,
}

impl Rounds {
    /// fio's `verify_only`: the writes are not issued.
    pub fn dry(&self) -> bool {
        self.read_back.as_ref().is_some_and(|r| r.dry)
    }
}

/// fio's verify read-back of what a round wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadBack {
    /// Read back by offset, each piece once (a sequential job, or one
    /// without the random map); else in the order written.
    pub by_offset: bool,
    /// fio's `verify_backlog` and its batch: whenever the pieces kept
    /// reach a multiple of the first, and the job's last request was not
    /// a read-back, the next this many requests read back (while any is
    /// kept) before the job writes on.
    pub backlog: Option<(u64, u64)>,
    /// fio's `verify_only`: a round's writes are drawn and kept, not
    /// issued, and read back at once.
    pub dry: bool,
}

/// The files a job's region is cut into (fio's `nrfiles`, `filename` and
/// `directory`): equal and contiguous ranges of the region unless placed
/// elsewhere; requests go to them as `service` says.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FileSet {
    /// How many files (fio's `nrfiles`; 0 and 1 alike: the region is one
    /// file).
    pub nrfiles: u32,
    /// fio's `filename` list, as written (`iosteer run` opens them; the
    /// simulator places the files as ranges of the drive).
    pub names: Vec<String>,
    /// The section header a job's files are named after when `name=`
    /// renamed the job (fio 3.33 names them `header.copy.file`); empty:
    /// its section.
    pub stem: String,
    /// fio's `directory`: where relative file names are (`iosteer run`).
    pub directory: Option<String>,
    /// Where each file starts, bytes, when not the contiguous cut of the
    /// region (`iosteer run` places each real file at its own address).
    pub starts: Vec<u64>,
    /// Which file a request goes to (fio's `file_service_type`).
    pub service: FileService,
}

/// fio's `file_service_type`: which file of a job the next request goes to.
/// Each file keeps its own sequential position.
#[derive(Clone, Debug, PartialEq)]
pub enum FileService {
    /// The files in turn, `every` requests each (`roundrobin[:N]`, fio's
    /// default).
    RoundRobin { every: u32 },
    /// A file drawn from `distribution` over the files, then `every`
    /// requests to it (`random[:N]`; `zipf`, `pareto`, `normal`, one
    /// request each), as fio draws it ([`crate::workload`]'s
    /// `drawn_file`). `hottest_at_random`: the distribution's hottest
    /// rank lies at a place among the files drawn once a job (fio's
    /// `zipf` and `pareto` without a center); otherwise at its center.
    Drawn {
        distribution: Distribution,
        every: u32,
        hottest_at_random: bool,
    },
    /// Each file until its size has been moved, then the next
    /// (`sequential`, and fio's `roundrobin:0` and `random:0`, whose next
    /// file fio draws where this takes the next in order). A random job
    /// with `norandommap` never finishes a file in fio, and stays on its
    /// first ([`FileService::for_random_without_map`]).
    Sequential,
}

impl Default for FileService {
    fn default() -> Self {
        FileService::RoundRobin { every: 1 }
    }
}

/// What `file_service_type` accepts, for messages.
pub const FILE_SERVICES: &str = "roundrobin, random or sequential (each with `:N`, requests \
    before the next file), or zipf, pareto or normal (gauss) with fio's parameter (zipf:1.2)";

impl FileService {
    /// The service of a random job with `norandommap`: fio's `sequential`
    /// keeps to the first file, which such a job never finishes (fio 3.33,
    /// randread, two files of 16 KiB, size=32k: 8 reads of file 0).
    pub fn for_random_without_map(self) -> FileService {
        match self {
            FileService::Sequential => FileService::RoundRobin { every: u32::MAX },
            other => other,
        }
    }

    /// The files are drawn uniformly (`random[:N]`): fio then takes a file
    /// that has moved its share of the pass out of the draw (a non-uniform
    /// draw starts such a file again instead, its `fio_file_reset`).
    pub fn draws_uniformly(&self) -> bool {
        matches!(
            self,
            FileService::Drawn {
                distribution: Distribution::Uniform,
                ..
            }
        )
    }

    /// fio's `file_service_type` value; `None` when it is not one of
    /// [`FILE_SERVICES`].
    pub fn parse(value: &str) -> Option<FileService> {
        let (kind, postfix) = match value.split_once(':') {
            Some((kind, postfix)) => (kind.trim(), Some(postfix.trim())),
            None => (value.trim(), None),
        };
        // fio reads N as C's atoi does: no number is 0, and 0 (or less)
        // keeps each file until it is done, as `sequential` does.
        let every = postfix.map_or(1, |n| {
            let (minus, n) = n.strip_prefix('-').map_or((false, n), |n| (true, n));
            let digits = n.find(|c: char| !c.is_ascii_digit()).unwrap_or(n.len());
            let n: u32 = n[..digits]
                .parse()
                .unwrap_or(if digits > 0 { u32::MAX } else { 0 });
            if minus {
                0
            } else {
                n
            }
        });
        Some(match kind {
            "roundrobin" | "random" | "sequential" if every == 0 => FileService::Sequential,
            "roundrobin" => FileService::RoundRobin { every },
            "random" => FileService::Drawn {
                distribution: Distribution::Uniform,
                every,
                hottest_at_random: false,
            },
            "sequential" => FileService::Sequential,
            // fio takes `gauss` for `normal` here (not in random_distribution).
            "zipf" | "pareto" | "normal" | "gauss" => FileService::Drawn {
                distribution: Distribution::parse(&value.replacen("gauss", "normal", 1))?,
                every: 1,
                // fio's center is the value after the parameter
                // (`zipf:1.2:0.3`); without it zipf and pareto start
                // their ranks at a random one (its `rand_off`), normal
                // at none.
                hottest_at_random: matches!(kind, "zipf" | "pareto")
                    && value.split(':').nth(2).is_none(),
            },
            _ => return None,
        })
    }
}

impl FileSet {
    /// How many files the region is cut into, at least one.
    pub fn count(&self) -> u64 {
        u64::from(self.nrfiles.max(1))
    }

    /// One file at the region's start: requests draw as a plain job's.
    pub fn is_plain(&self) -> bool {
        self.nrfiles <= 1 && self.starts.is_empty()
    }

    /// Where file `index` starts: its placed address, else its cut of the
    /// region that starts at `region_start`, `file_size` bytes a file.
    pub fn start(&self, index: usize, region_start: u64, file_size: u64) -> u64 {
        self.starts
            .get(index)
            .copied()
            .unwrap_or(region_start + index as u64 * file_size)
    }
}

/// fio's `sync`: how synchronous a job's writes are. Linux sends an O_SYNC
/// or O_DSYNC write to the drive as FUA ([`iosteer_sched::Request::fua`]);
/// on a file, O_SYNC also makes the file's metadata (its times) durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WriteSync {
    /// Plain writes (fio's default, `sync=0` or `none`).
    #[default]
    None,
    /// O_SYNC (`sync=1` or `sync`): the data and the file's metadata.
    Sync,
    /// O_DSYNC (`sync=dsync`): the data, and only the metadata needed to
    /// read it back.
    Dsync,
}

impl WriteSync {
    /// Whether the writes go to the drive FUA.
    pub fn fua(self) -> bool {
        self != WriteSync::None
    }
}

/// fio's strided zones ([`crate::fio`]'s `zonemode=strided`): the job
/// works in a zone of `range` bytes of its file until it has moved `size`
/// bytes there, going round the zone again if `size` is more, then moves
/// on `range + skip` bytes, back to the file's start once past its end.
/// Random offsets are drawn in the zone; a sequential job starts each zone
/// at its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StridedZones {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

impl StridedZones {
    /// The start of the zone whose requests would run past the end of a
    /// file of `file_size` bytes, if one does: random ones are drawn over
    /// the whole range, sequential ones go `size` into it.
    pub fn cut_by_the_end(&self, file_size: u64, sequential: bool) -> Option<u64> {
        let stride = self.range.saturating_add(self.skip).max(1);
        let last_start = (file_size.saturating_sub(1) / stride) * stride;
        let reach = if sequential {
            self.size.min(self.range)
        } else {
            self.range
        };
        (last_start.saturating_add(reach) > file_size).then_some(last_start)
    }
}
