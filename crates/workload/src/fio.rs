//! fio job files: the options that describe a workload's shape, read as
//! fio reads them.
//!
//! The text is read as fio does ([`crate::fio_text`]): `#` and `;` start
//! comments (at a line's start or after a value), `${VAR}` comes from the
//! environment (an unset one is an error naming it), `$ncpus`, `$pagesize`
//! and `$mb_memory` are fio's; `include FILE` reads FILE beside the file
//! that includes it (options only: an included `[section]` is refused).
//! Sections are `[global]` (defaults for the jobs after it) and one section
//! per job. Options, with fio's meaning and units (fio's other names in
//! parentheses):
//!
//! | option | values |
//! |---|---|
//! | `rw` (`readwrite`) | `read`, `write`, `randread`, `randwrite`, `rw`/`readwrite` (sequential mix), `randrw`, `trim`, `randtrim`, `trimwrite` (sequential writes, each write's blocks trimmed just before it, with holes and backwards too; trim sizes of their own, `bs=4k,8k,16k`, are noted: fio then trims in them and its trims drift off its writes); `:N` after it: sequential, the next request starts N bytes after one ends (holes; a negative N below minus the block size goes backwards); random, a new random offset every N requests, the others following on |
//! | `rw_sequencer` | `sequential` (default) or `identical` (the N requests of `rw=randread:N` at one offset) |
//! | `rwmixread`, `rwmixwrite` | percent of reads / writes in mixes (default 50) |
//! | `bs` (`blocksize`) | a size (default 4k), or `read,write,trim` sizes: as in fio, a blank one is the default and the last one stands for the directions after it unless the list ends in a comma (`,8k`: 4k reads, 8k writes and trims; `8k,`: 8k reads only) |
//! | `bsrange` (`blocksize_range`) | `min-max` (`min:max`; written high to low, swapped), or `read,write,trim` ranges as `bs` writes sizes (a blank one keeps the direction's `bs`): as in fio, sizes are multiples of `min`, each equally likely, and `max` too when it is not one, drawn as often as the part of a step it caps (`6k-20k`: 6k, 12k, 18k 30% each, 20k 10%) |
//! | `bssplit` | `4k/50:64k/50`, or one list per direction `read,write,trim`; a blank percentage shares the rest, and shares short of 100 leave the rest to the last size (fio 3.33 draws it then), with a note; without `bs_unaligned` a size that is not a multiple of its direction's smallest is rounded down to one, as fio does, with a note (`4k/50:6k/50` issues only 4 KiB) |
//! | `blocksize_unaligned` (`bs_unaligned`) | a `bsrange` draws any byte count, as fio 3.33 draws it (each count from `lo` to `hi - 1` with chance `1/hi`, `hi` with `lo/hi`), random offsets still on `lo`; `iosteer run` refuses it under O_DIRECT as the job's granule (1 byte) does not meet the target's alignment (fio fails such a job too); a `bssplit` keeps its sizes as written (`fio/blocks.rs`) |
//! | `bs_is_seq_rand` | as in fio, the read sizes are the sequential requests', the write sizes the random ones', whatever their direction; refused where a random request may be larger than its direction's boundary (fio shortens or stops it by its draws; `fio/blocks.rs`) |
//! | `size` | a size, or a percentage of the drive (default: the whole drive); a job moves exactly `size`, its last request cut to it, as fio's sequential jobs and its random ones with their random map (the default) do, but only whole blocks of each file, as fio's (`bs=4000 size=1m`: 262 requests, `whole_blocks`); a random job without the map (`norandommap`, a non-uniform `random_distribution`, `rw=randread:N`, a `blockalign` other than the blocks), or with requests that follow on (`percentage_random` between 1 and 99), sends its last request whole, past `size`, as fio's does ([`JobShape::random_map_holds_bytes`](crate::job_shape::JobShape::random_map_holds_bytes)) |
//! | `filesize` | each file's size, as in fio: the region is `filesize × nrfiles` (a `size` that differs is refused); a range (`64k-1m`: fio draws each file's size in it) is refused |
//! | `io_size` (`io_limit`) | bytes to move, when not `size`, in rounds of `size` (see `loops`); or `N%`, that share of `size` (of the region without one), as in fio (`0%` leaves it unset) |
//! | `number_ios` | requests to issue per loop, at most (`number_ios × loops` in all), counted from the end of `ramp_time` as fio counts them; as in fio, a `time_based` job runs its `runtime` whatever it says |
//! | `fill_device` (`fill_fs`) | write from `offset` to the end of the drive |
//! | `loops` | rounds, as fio's loops ([`Rounds`](crate::job_shape::Rounds)): each moves `size` (`io_size` for a random writer with `norandommap`), lets its requests complete and flushes with `end_fsync`; past its loops a job goes on while the bytes it completed fall short of `io_size` (fio 3.33, `size=32k io_size=64k loops=2`: 16 writes, where a byte limit of `loops × io_size` gave 32) |
//! | `offset` (`fileoffset`), `offset_increment`, `offset_align` | a size or a percentage; copy *n* of `numjobs` starts *n* increments further; as in fio, when either is a percentage the start is rounded up to a multiple of `offset_align` (default: the job's smallest block; `fio/offsets.rs`) |
//! | `iodepth` | requests outstanding (default 1); 1 with a synchronous engine (`psync`, fio's default, `sync`, `vsync`, `pvsync`, `pvsync2`, `mmap`, `splice`), as fio caps it, with a note |
//! | `max_latency` | a time per direction (`read,write,trim`), microseconds unless suffixed: the job stops issuing at its first request, completed after `ramp_time`, that took longer, as fio ends it with error 110 (ETIMEDOUT), and a note says which and when; not checked under `disable_lat` or `gtod_reduce` (noted), as in fio |
//! | `iodepth_low`, `iodepth_batch_complete_min` (`iodepth_batch_complete`) | once the queue is full (`iodepth`, or the depth a `latency_target` allows) the job lets it drain, as fio's `wait_for_completions` does, reaping at least `iodepth_batch_complete_min` (default 1) a time until at most `iodepth_low` (default and 0: `iodepth`) are left, then fills the queue again; `iodepth_batch_complete_min=0` (fio polls) is noted and refills as each completes |
//! | `rate` | bytes per second (`30m`: 30 MiB/s), or `read,write,trim` rates as `bs` writes sizes (a blank one uncapped: `rate=,10m` caps writes only). As in fio, each direction is capped on its own: `rate=10m` on a job that reads and writes lets it read 10 MiB/s and write 10 MiB/s ([`JobShape::direction_rates`](crate::job_shape::JobShape::direction_rates)) |
//! | `rate_iops` | requests per second, per direction as `rate`; counted in bytes of the direction's smallest block, as fio does; `rate` and `rate_iops` on one direction are refused, as fio refuses them, and so is a floor (`rate_min`, `rate_iops_min`) above its rate |
//! | `rate_process` | `linear` (default: fixed gaps; in a job that reads and writes each direction keeps to its rate since the job's start; any rated job catches up after its iodepth held it back, issuing at once what it owes, as fio's do (`iosteer_rate_resumes` resumes instead)) or `poisson` (exponential gaps averaging the rate; fio draws them per request of the smallest block) |
//! | `rate_min`, `rate_iops_min`, `rate_cycle` | bytes or requests per second, per direction as `rate`; a job that issued less in a direction it issued, over its whole run, is named in the report's notes of `iosteer sim` and `iosteer run` (fio judges each `rate_cycle`, 1000 ms by default, and stops the job; a `rate_cycle` given is noted) |
//! | `startdelay`, `runtime` (`timeout`), `ramp_time` | times, seconds unless suffixed (`us`, `ms`, `s`, `m`, `h`); a `startdelay` range (`1-2`: fio draws each job's delay in it) is refused; requests completed in the ramp do not count in the figures, and the ramp adds to the runtime; `runtime=0` is no limit, as in fio |
//! | `time_based` | run for `runtime`, wrapping over the region |
//! | `thinktime`, `thinktime_blocks` | microseconds unless suffixed: the job waits that long after every `thinktime_blocks` completions (default 1) before it issues again, under a rate too |
//! | `numjobs` | copies of the job |
//! | `stonewall` (`wait_for_previous`) | the job, and those after it, start once every earlier job has ended |
//! | `wait_for` | a job name: start once every copy of that job has ended |
//! | `random_distribution` | `random`, `zipf:θ`, `pareto:h`, `normal[:dev%]` (`gauss`: as fio draws it, a bell 1/12 of the region wide as its deviation, widened by a jitter `dev%` wide), each with an optional `:center` (0.0 to 1.0); `zoned:access%/range%:...` ([`crate::distribution`]) |
//! | `blockalign` (`ba`) | the boundary random offsets fall on (one size, or read,write,trim sizes as `bs`); by default, as in fio, each direction's smallest block (`bs=4k,1000`: reads on 4 KiB, writes on 1000 bytes) |
//! | `percentage_random` | percent of a random job's requests at random offsets, one for every direction or one per direction as `bs` (`0,100`: reads follow on, writes at random; `,50`: reads all random); the others follow on from the last request of their direction and file, as fio's; the random ones keep fio's random map (each block once a pass, see `norandommap`) and those that follow on take no block of it, as fio marks none (`rw=randwrite bs=4k size=1m percentage_random=99`: 256 writes on 254 distinct blocks in fio, on 252-256 here); fio carries such a job's map from one loop to the next, iosteer starts it anew each loop (noted); 0 in every direction the job issues makes it its sequential twin (`rw=randread` as `rw=read`, stopping at the last whole block; `rw=randrw` as `rw=rw`), as in fio |
//! | `norandommap` | draws random offsets with replacement, as fio does with it; without it (the default) a random job of uniform offsets keeps fio's random map: each block of a file once a pass, the next free block after one already taken, a request cut at a block taken, a new pass once all are taken (`workload/random_map.rs`; the maps of a job file's jobs hold at most [`MAX_RANDOM_MAP_BITS`] blocks, a job past that draws with replacement, noted). Where a direction's blocks are larger than another's (`bs=4k,1000`), fio 3.33 may end a random job before `size` bytes, and the report's notes say so (`fio/early_end.rs`) |
//! | `randrepeat`, `randseed` | accepted with a note: `--seed` seeds every job, so a run always repeats itself for a given seed |
//! | `nrfiles`, `filename` | files (or a `:` list of names, `\:` a colon within a name): the region is cut into that many equal, contiguous ranges, each with its own position; `iosteer run` opens the named files, each holding `size / files` bytes from `offset` |
//! | `file_service_type` | which file a request goes to, as fio chooses (its write_iolog agrees): `roundrobin[:N]` (the default; N requests each), `random[:N]` (a file drawn among those that have not moved their share of the pass yet, as fio takes a done file out of the draw; N requests to it), `sequential` (each file until its size has been moved; a random job with `norandommap` never finishes one, and stays on its first, as in fio; `roundrobin:0`, `random:0` and an N that is no number, which fio reads as 0, are sequential too), `zipf`, `pareto`, `normal` (a file drawn by that distribution per request, as fio draws it: over 1024 ranges a file, the ranks of zipf and pareto laid from a range drawn once a job, or from the center given, so their hottest ranks fill one file before the next in turn gets any: `zipf:1.2` on 8 files gives one about 90% of the requests) |
//! | `directory` | where `iosteer run` finds relative file names (one directory) |
//! | `direct`, `buffered` | kept: `iosteer run` bypasses the page cache (O_DIRECT) unless `--buffered`, whatever a job asks, and notes the jobs that ask otherwise (fio's default is buffered) |
//! | `fsync`, `fdatasync` | a flush after every N writes, as fio issues it: when the job goes on (none after the write that ends it); flushes are reported as a class of their own (`flush`), not among the writes, as fio reports its syncs |
//! | `end_fsync`, `fsync_on_close` | a flush at the end of each loop, once its requests have completed (or when a runtime stops the job), for a job that writes: fio syncs no job that only reads |
//! | `sync` | `0` or `none` (fio's default); `1` or `sync` (O_SYNC) and `dsync` (O_DSYNC): every write is sent FUA, as Linux sends a synchronous direct write, with a note (`iosteer run` writes with RWF_SYNC or RWF_DSYNC) |
//! | `fallocate` | `native`, `posix`, `keep`, `1` (fio's default: `iosteer run` reserves what a file it creates or grows needs before the run) or `none`, `0`, `truncate` (left sparse) |
//! | `verify`, `do_verify` | a method (`md5`, `crc32c`, ...); a job that writes with `do_verify=1` (fio's default), not `time_based` (which reads nothing back, as in fio without `verify_backlog`; with it fio reads back as it runs, which is not modelled: the notes say so), reads back what each loop wrote as fio does ([`ReadBack`](crate::job_shape::ReadBack)): after the loop's writes complete (and its `end_fsync`), every piece once, in the order written while fio's random map is on, else (`norandommap`, or a distribution other than uniform) by offset with a later write replacing the pieces it overlaps, at the job's iodepth whatever its rate or think time; a loop then moves `size` whatever `io_size` says, and loops go on while the bytes done, read-backs included, fall short of `io_size`, as in fio 3.33; a loop cut by the runtime reads nothing back; a job that would keep over 16.8 million pieces to read back is refused before the run. The data is not checked (the notes say so; `iosteer run --verify` checks its own) |
//! | `verify_backlog`, `verify_backlog_batch` | as fio's `get_io_u` takes them: whenever the pieces kept reach a multiple of the backlog and the job's last request was not a read-back, the next batch (the backlog unless given) of requests read back before the job writes on; what is left is read back after the loop. A read-back may go out while its write is still in flight (fio waits for the write), which changes the order only at an iodepth above 1 |
//! | `verify_only` | the job issues no writes and reads back what they would have written (an earlier run wrote it), as fio's dry run does; a note says so |
//! | `write_hint` | `none`, `short`, `medium`, `long`, `extreme` |
//! | `ioengine` | an engine that issues block I/O (`libaio`, `io_uring`, `psync`, ...); network, zoned, file-system metadata, `null` (no I/O) and other engines are refused by name ([`crate::fio_options::check_engine`]) |
//! | `zonemode` | `none`; `zbd` is refused (zoned drives are not modelled) |
//! | `exitall` | accepted with a note: the other jobs run to their own end here |
//! | `unlink`, `unlink_each_loop` | accepted with a note: fio deletes the job's files when the job ends (or after each loop); `iosteer run` leaves them |
//! | `exec_prerun`, `exec_postrun`, `pre_read` | accepted with a note: the command is not run, the files not read ahead |
//! | `allow_file_create` | `0`: `iosteer run` refuses a missing file rather than create it, as fio does ([`JobShape::no_create`](crate::job_shape::JobShape::no_create)) |
//! | `nowait` | `0`, fio's default, accepted; `1` (a request that would block fails with EAGAIN) refused |
//! | `latency_target`, `latency_window`, `latency_percentile`, `latency_run` | times in microseconds unless suffixed, a percentage (default 100), a flag: the job searches the depth (1 to `iodepth`) at which that share of each window's requests stays under the target, runs one more window at it and ends, as fio's does (`latency_run=1`: adjusts for its whole run); the report's notes give the depth found, and the figures are that final window, as fio clears a job's figures then (when the job ran alone; a note says when it did not) ([`crate::depth_search`]) |
//! | `flow`, `flow_id`, `flow_sleep` | a weight up to 1000, a flow number (default 0), microseconds: jobs of a flow keep their requests in the ratio of their weights, a job ahead of its share holding back (letting its requests complete and waiting `flow_sleep`), as fio's shared flow counter does; a negative weight is taken as fio 3.33 takes it, unsigned, with a note ([`crate::flow`]); the report's notes give each job's share |
//! | `steadystate` (`ss`), `steadystate_duration` (`ss_dur`), `steadystate_ramp_time` (`ss_ramp`) | `iops`, `iops_slope`, `bw` or `bw_slope` and a limit (`iops:2%`, `iops:20`, `bw:10m`; fio's default `iops_slope:0.01%`), seconds unless suffixed: the job stops once its last `ss_dur` one-second samples (taken from one second past `ss_ramp`) meet the criterion, as fio's does; with `group_reporting`, the jobs of a reporting group (`new_group`, `stonewall` start the next) are judged on their sum and stop together, and jobs of one group whose steady states differ are refused, as fio refuses them; the report's notes give the window and where it was reached ([`crate::steady_state`]) |
//! | `cmdprio_percentage`, `cmdprio_class`, `cmdprio`, `cmdprio_bssplit` | checked as fio checks them (0-100, classes 1-3, levels 0-7, `size/percent[/class/level]` entries; libaio and io_uring only; a percentage and a bssplit not both), and noted: I/O priorities are not modelled |
//! | `rwmixcycle`, `percentage_sequential` | refused, as fio refuses them: deprecated |
//! | `read_iolog` | an iolog of fio's (versions 2 and 3, [`crate::iolog`]), opened from the current directory as fio opens it: the job replays it as fio does, at most `iodepth` requests out, a version 3 log's gaps counted from the request before, a version 2 log's `wait N` holding the next ones until N ms after the start; its `rw`, `bs`, `size`, `offset`, `filename` (and the other options that shape drawn I/O) are replaced by the log, with a note; options a replay does not model (rates, think time, flushes, loops, `numjobs`, `time_based`, a latency target, flows) are refused (`fio/iolog_job.rs`) |
//! | `replay_no_stall`, `replay_time_scale` | with `read_iolog`: no waits; percent of the recorded rate (version 3 gaps, truncated to whole microseconds, as fio does) |
//! | `replay_skip` | with `read_iolog`: `read`, `write`, `trim`, `sync` lines dropped (each line's gap with it), as fio's later iolog reader does; fio 3.33 ignores it for an iolog (noted) |
//! | `replay_scale`, `replay_align` | with `read_iolog`: offsets divided, then rounded down to a power of two |
//! | `replay_redirect` | with `read_iolog`: the log's files overlap on one device (without it each lies in a range of the drive of its own, as fio replays each to its own file) |
//! | `read_iolog_chunked` | accepted: how fio reads the log, not what it replays |
//! | `name`, `description` | labels |
//! | `numruns` | an integer, accepted with a note: fio 3.33 reads it only for its tiobench profile (`--profile=tiobench`); in a job file it runs the job once and reports that one run, as here |
//! | `iosteer_trim_ahead` | not fio's: a size; a sequential writer trims each segment of that size just before it writes over it, content replaced by new content ([`Synthetic::trim_ahead`](crate::workload::Synthetic::trim_ahead); the built-in scenarios' fill does) |
//! | `iosteer_rate_resumes` | not fio's: a rated job held back by its iodepth resumes its schedule from when it is freed, in `iosteer sim`, as the built-in scenarios' jobs do, instead of catching up on the arrivals it owes as fio does (`iosteer run` keeps fio's schedule) ([`JobShape::rate_catches_up`](crate::job_shape::JobShape::rate_catches_up)) |
//! | `iosteer_backpressure` | not fio's: a time, microseconds unless suffixed (as fio's `latency_target`); the job listens to the scheduler's back-pressure and holds a write or trim while it would wait longer than this ([`Synthetic::backpressure`](crate::workload::Synthetic::backpressure)) |
//!
//! Accepted and ignored, because they change how fio reports, logs, places
//! its threads, tunes its engine, fills its buffers or checks data, not
//! which I/O is issued or when ([`crate::fio_options::IGNORED`]):
//! `description`, `group_reporting`, `new_group` (but for steady state),
//! `stats`, `per_job_logs`,
//! `write_lat_log`, `write_bw_log`, `write_iops_log`, `write_hist_log`,
//! `write_iolog` (with a note: iosteer writes none of fio's logs),
//! `log_avg_msec`, `log_hist_msec`, `log_*`, `clat_percentiles`,
//! `slat_percentiles`, `lat_percentiles`, `percentile_list`, `disable_lat`,
//! `disable_clat`, `disable_slat`, `disable_bw`, `unified_rw_reporting`,
//! `unit_base`, `bwavgtime`, `iopsavgtime`, `gtod_reduce`,
//! `gtod_cpu`, `clocksource`; `thread`, `cpus_allowed`,
//! `cpus_allowed_policy`, `cpumask`, `numa_cpu_nodes`, `numa_mem_policy`,
//! `nice`, `prio`, `prioclass`, `uid`, `gid`, `cgroup*`; `ioscheduler` (noted: iosteer schedules with its own), `iodepth_batch_submit`, `iodepth_batch_complete_max`,
//! `io_submit_mode`, `fixedbufs`, `registerfiles`, `sqthread_poll*`,
//! `cmd_type`, `hipri`, `nonvectored`, `uncached`, `force_async`, `iomem`,
//! `iomem_align`, `hugepage-size`, `lockmem`, `invalidate`, `create_*`,
//! `allow_mounted_write`,
//! `fadvise_hint`, `overwrite`, `filename_format`, `lockfile`,
//! `random_generator`, `allrandrepeat`, `softrandommap`,
//! `continue_on_error`, `ignore_error`, `error_dump`; `buffer_pattern`,
//! `buffer_compress_*`, `refill_buffers`, `scramble_buffers`,
//! `zero_buffers`, `dedupe_*`; `verify_*`.
//!
//! Sizes take fio's suffixes as its default `kb_base=1024` reads them:
//! `k`, `m`, `g`, `t`, `p`, with or without `b` (or `i`), are powers of
//! 1024, and `kib`, `mib`... powers of 1000; `kb_base=1000` turns both
//! round for every size of its section, wherever it stands there, and of
//! the job sections after it if in `[global]` (a job's own does not reread
//! `[global]`'s sizes, as fio read them already; fio's default `bs`, 4096
//! bytes, stays); `0x` before a number (no suffix) is
//! hexadecimal. A size or time with a decimal point (`1.5m`, `12.5%`,
//! `1.5s`) is refused, naming the option: fio 3.33 reads only its whole
//! part, in the option's default unit (`size=1.5m` is 1 byte to it); so is
//! one with a space before its unit (`bs=4 k` is 4 bytes to fio), and a
//! time in a unit fio does not know (`1sec`, `1min`, `100ns`: microseconds
//! to fio). Any
//! other option is an error naming the file, the line
//! and the option, with what is supported: not a silent default.
//!
//! When a job ends, as fio: without `time_based` once it has moved `size`
//! bytes (or `io_size`, times `loops`), or at `runtime` if that comes first;
//! a sequential job with holes (`rw=read:4k`) after one pass over its
//! region (times `loops`) unless `io_size` asks for more, or the region is
//! its whole file (from 0 to the end of a file fio creates, or of the
//! drive) and its last request ends short of the file's end, where fio
//! wraps until `size` bytes are moved, as here for every other job;
//! with `time_based` at `runtime`, wrapping over its region (`time_based`
//! without `runtime` is ignored, with a note, as fio ignores it).
//! Jobs after a `stonewall` start when the earlier ones have ended, or at
//! their `startdelay` from the run's start if that is later (as fio 3.33
//! holds them); their `runtime` counts from their start.

use iosteer_sched::units::{self, KbBase};
use iosteer_sched::{LifetimeHint, Nanos};
use thiserror::Error;

use crate::bssplit::BlockSplit;
use crate::distribution::{self, Distribution};
use crate::fio_options::{
    canonical, check_engine, near_miss, IGNORED, REFUSED, REPLAY, SUPPORTED, TRACE,
};
use crate::fio_text;
use crate::job_shape::{FileService, FileSet, JobShape, WriteSync};
use crate::steady_state::SteadyState;
use crate::workload::{Arrival, Job, JobKind, Synthetic};

#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{file}:{line}: {message}")]
pub struct FioError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// A parsed job file: its jobs, and what the report should say about how
/// they were read (options accepted with a caveat).
#[derive(Clone, Debug, PartialEq)]
pub struct JobFile {
    pub jobs: Vec<Job>,
    pub notes: Vec<String>,
}

/// Most requests a job may keep outstanding.
const MAX_IODEPTH: u32 = 65_536;

/// Most jobs a file may make, `numjobs` copies counted (fio's own limit):
/// jobs of a later stonewall group each list every earlier one.
pub const MAX_JOBS: usize = 4096;

/// Most options in force in one section, `[global]`'s included (fio has
/// about 300 options in all): each section reads every one of them.
pub const MAX_SECTION_OPTIONS: usize = 256;

/// Verification methods fio knows (`verify=`).
const VERIFY_METHODS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha512",
    "sha384",
    "sha256",
    "sha224",
    "sha1",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
    "pattern",
    "null",
];

/// Parses `text` into jobs for a drive of `capacity` bytes (notes dropped;
/// see [`parse_file`]).
pub fn parse(text: &str, file: &str, capacity: u64) -> Result<Vec<Job>, FioError> {
    parse_file(text, file, capacity).map(|f| f.jobs)
}

/// A capacity past any drive: a job file read against it, to learn which
/// files its jobs name before their sizes are known, is not checked for
/// the memory its read-backs would keep (the read against the real size
/// is; a random writer sized by its file would keep 2^48 pieces here).
pub const UNKNOWN_CAPACITY: u64 = u64::MAX / 8;

/// Parses `text` into jobs and notes, variables from the environment;
/// `include` lines read their files beside `file`.
pub fn parse_file(text: &str, file: &str, capacity: u64) -> Result<JobFile, FioError> {
    let read = |path: &std::path::Path| fio_text::read_text(path);
    let included = fio_text::with_includes(text, file, &read)?;
    parse_with_env(&included.text, file, capacity, &fio_text::environment)
        .map_err(|e| included.locate(e))
}

/// [`parse_file`] with variables looked up by `env`.
pub fn parse_with_env(
    text: &str,
    file: &str,
    capacity: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, FioError> {
    let lines = fio_text::lines(text, file, env)?;
    let mut sections = sections(&lines, file)?;
    // fio's `name=` in a job's own section names the job in place of its
    // section (`wait_for` names it so, and its figures go by it); in
    // `[global]` it names none (fio 3.33 reads the header after it).
    for section in &mut sections {
        let own = section.scopes.last().copied().unwrap_or(0);
        let named = section.options[own..]
            .iter()
            .rev()
            .find(|o| o.0 == "name" && !o.1.is_empty());
        if let Some((_, name, _)) = named {
            section.name = name.clone();
        }
    }
    let mut jobs: Vec<Job> = Vec::new();
    let mut read_back_pieces = 0u64;
    let mut random_map_bits = 0u64;
    let mut notes = Vec::new();
    // Jobs of earlier stonewall groups: a group starts when they have ended.
    let mut before_group: Vec<usize> = Vec::new();
    // fio's reporting groups: a job with `stonewall` or `new_group` starts
    // the next one (numjobs copies stay in their job's).
    let (mut group, mut first_of_group) = (0u32, 0usize);
    for section in &sections {
        let mut spec = JobSpec::from_options(section, file, capacity, &mut notes)?;
        if (spec.stonewall || spec.new_group) && jobs.len() > first_of_group {
            (group, first_of_group) = (group + 1, jobs.len());
        }
        steady_state_in_group(&mut spec, group, &jobs[first_of_group..], &section.name).map_err(
            |message| FioError {
                file: file.to_string(),
                line: section.line,
                message,
            },
        )?;
        if let Some((size, region)) = spec.size_cut {
            notes.push(format!(
                "job {}: size={size} is more than filesize x nrfiles = {region} bytes: the job moves {region}, as fio cuts it",
                section.name
            ));
        }
        if spec.time_based_ignored {
            notes.push(format!(
                "job {}: time_based without a runtime is ignored, as fio ignores it (\"time_based requires a runtime/timeout setting\"): the job ends on its size",
                section.name
            ));
        }
        if spec.time_based && spec.shape.ios_limit.is_some() {
            notes.push(format!(
                "job {}: number_ios does not end a time_based job (as in fio): it runs its runtime",
                section.name
            ));
        }
        if spec.stonewall && !jobs.is_empty() {
            before_group = (0..jobs.len()).collect();
        }
        let mut after = before_group.clone();
        for (waitee, line) in &spec.wait_for {
            let found: Vec<usize> = (0..jobs.len())
                .filter(|&i| jobs[i].shape.section == *waitee)
                .collect();
            if found.is_empty() {
                return Err(FioError {
                    file: file.to_string(),
                    line: *line,
                    message: format!(
                        "job [{}]: wait_for={waitee}: no earlier job of that name",
                        section.name
                    ),
                });
            }
            after.extend(found);
        }
        after.sort_unstable();
        after.dedup();
        // A create_only job has ended before it starts: none waits for it.
        after.retain(|&j| !jobs[j].shape.create_only);
        refuse_waiting_on_own_flow(&spec.shape, &jobs, &after, &section.name).map_err(
            |message| FioError {
                file: file.to_string(),
                line: section.line,
                message,
            },
        )?;
        if jobs.len() + spec.numjobs as usize > MAX_JOBS {
            return Err(FioError {
                file: file.to_string(),
                line: section.line,
                message: format!(
                    "job [{}]: more than {MAX_JOBS} jobs in the file (numjobs copies counted); at most {MAX_JOBS}",
                    section.name
                ),
            });
        }
        for copy in 0..spec.numjobs {
            let name = if spec.numjobs > 1 {
                format!("{}.{copy}", section.name)
            } else {
                section.name.clone()
            };
            let place = (file, capacity);
            let mut job = spec.job(name, &section.name, copy, after.clone(), place, &mut notes)?;
            if section.header != section.name {
                job.shape.files.stem = section.header.clone();
            }
            keep_random_map(&mut job, &mut random_map_bits, &mut notes);
            read_back_pieces += verify::pieces_kept(&job);
            if capacity < UNKNOWN_CAPACITY {
                verify::check_pieces(read_back_pieces).map_err(|message| FioError {
                    file: file.to_string(),
                    line: spec.last_line,
                    message: format!("job [{}]: {message}", section.name),
                })?;
            }
            jobs.push(job);
        }
    }
    if jobs.is_empty() {
        return Err(FioError {
            file: file.to_string(),
            line: 1,
            message: "no job section (only [global], or nothing)".into(),
        });
    }
    notes.dedup();
    Ok(JobFile { jobs, notes })
}

/// How each of a section's options reads size prefixes: with the last
/// `kb_base` of the section it was written in (fio applies `kb_base`
/// before that section's other options, wherever it stands), or else the
/// one in force from the `[global]` sections before. A job's `kb_base`
/// does not change the sizes `[global]` gave it (fio read them already).
/// An error is the line and the message.
fn kb_bases(section: &Section) -> Result<Vec<KbBase>, (usize, String)> {
    let mut bases = Vec::with_capacity(section.options.len());
    let mut base = KbBase::Binary;
    let ends = section.scopes.iter().skip(1).copied();
    for (start, end) in section
        .scopes
        .iter()
        .copied()
        .zip(ends.chain([section.options.len()]))
    {
        let scope = &section.options[start..end];
        for (_, value, line) in scope.iter().filter(|(key, _, _)| key == "kb_base") {
            base = match value.as_str() {
                "1024" => KbBase::Binary,
                "1000" => KbBase::Decimal,
                _ => return Err((
                    *line,
                    format!("option `kb_base={value}`: expected 1024 (fio's default: 4k is 4096 bytes, 4KiB 4000) or 1000 (4k is 4000 bytes, 4KiB 4096)"),
                )),
            };
        }
        bases.resize(end, base);
    }
    Ok(bases)
}

/// Puts a job's steady state in its reporting group (judged with the
/// group's other jobs under `group_reporting`), and refuses it, as fio
/// does, if the group's earlier jobs (`in_group`) judge steady state
/// otherwise.
fn steady_state_in_group(
    spec: &mut JobSpec,
    group: u32,
    in_group: &[Job],
    section: &str,
) -> Result<(), String> {
    let grouped = spec.group_reporting;
    if let Some(steady) = &mut spec.shape.steady_state {
        steady.group = grouped.then_some(group);
    }
    let same = |a: &Option<SteadyState>, b: &Option<SteadyState>| match (a, b) {
        (Some(a), Some(b)) => (a.criterion, a.seconds, a.ramp) == (b.criterion, b.seconds, b.ramp),
        (a, b) => a.is_none() && b.is_none(),
    };
    match in_group.iter().find(|job| !same(&job.shape.steady_state, &spec.shape.steady_state)) {
        Some(other) => Err(format!(
            "job [{section}]: its steady state (ss, ss_dur, ss_ramp) differs from that of job {}, in the same reporting group: fio rejects the job (\"steadystate options must be consistent within reporting groups\"); give them the same, or start a new group (new_group or stonewall)",
            other.name
        )),
        None => Ok(()),
    }
}

/// Refuses a job of a flow that waits (stonewall, `wait_for`) for a job of
/// the same flow: the waiting job's weight counts from the start, so the
/// one it waits for is held back for it and can never end (fio hangs on
/// such a file too).
fn refuse_waiting_on_own_flow(
    shape: &JobShape,
    jobs: &[Job],
    after: &[usize],
    section: &str,
) -> Result<(), String> {
    let Some(flow) = &shape.flow else {
        return Ok(());
    };
    let same_flow = |i: &&usize| {
        jobs[**i]
            .shape
            .flow
            .as_ref()
            .is_some_and(|f| f.id == flow.id)
    };
    match after.iter().find(same_flow) {
        Some(&i) => Err(format!(
            "job [{section}]: waits (stonewall or wait_for) for job {}, which is in its flow (flow_id={}): the flow holds that job back for this one's share, so neither ends (fio hangs on this file); give them different flow_id values or drop the wait",
            jobs[i].name, flow.id
        )),
        None => Ok(()),
    }
}

/// One section's options, read.
#[derive(Clone, Debug)]
struct JobSpec {
    synthetic: Synthetic,
    shape: JobShape,
    start: Nanos,
    runtime: Option<Nanos>,
    time_based: bool,
    /// `size` given over `filesize` x files, and that region: cut to it.
    size_cut: Option<(u64, u64)>,
    /// How a copy that starts further on (`offset_increment`) is cut at
    /// the drive's end, as fio cuts it: `Some(None)` without a `size` (the
    /// copy runs to the end), `Some(Some(given))` a percentage `size`
    /// (noted); `None`, an absolute size, which must fit.
    cut_at_end: Option<Option<String>>,
    /// `time_based` given without a runtime (dropped, as fio drops it).
    time_based_ignored: bool,
    numjobs: u32,
    /// Where copy *n* starts ([`offsets::Start`]).
    first_byte: Start,
    stonewall: bool,
    /// fio's `new_group` and `group_reporting`: the job's reporting group,
    /// over which a steady state is judged.
    new_group: bool,
    group_reporting: bool,
    /// Section names to wait for, with the line that names each.
    wait_for: Vec<(String, usize)>,
    /// Bytes to move: `io_size`, else `size`.
    io_size: Option<u64>,
    loops: u64,
    /// Line of the section's last option, for errors about the whole job.
    last_line: usize,
    /// The line of the option that last placed the job's region (`size`,
    /// `offset`...), else the section's last: where a region past the
    /// drive's end is blamed.
    region_line: usize,
    /// fio's verification options ([`verify`]).
    verify: Verify,
    norandommap: bool,
    /// fio's `read_iolog`: the job replays this log.
    iolog: Option<IologJob>,
}

impl JobSpec {
    /// Copy `copy` of the job, named `name`, after the jobs `after`.
    fn job(
        &self,
        name: String,
        section: &str,
        copy: u32,
        after: Vec<usize>,
        (file, capacity): (&str, u64),
        notes: &mut Vec<String>,
    ) -> Result<Job, FioError> {
        if let Some(iolog) = &self.iolog {
            let iodepth = self.synthetic.arrival.iodepth;
            // An `iosteer_trace` lies in the job's region, from its offset
            // (fio's logs say their own offsets).
            let offset = match iolog.is_trace() {
                true => self.first_byte.of_copy(copy).unwrap_or(0),
                false => 0,
            };
            let region = self.synthetic.size.min(capacity.saturating_sub(offset));
            let (mut kind, pacing) = iolog.kind(&name, iodepth, (file, region), notes)?;
            if let (JobKind::Trace(records), true) = (&mut kind, offset > 0) {
                let bases: Vec<u64> = match records.devices() {
                    [] => vec![offset],
                    devices => devices.iter().map(|d| d.base + offset).collect(),
                };
                records.rebase(&bases);
            }
            let mut shape = self.shape.clone();
            let log_files = iolog.files(&kind);
            if !log_files.is_empty() {
                // fio opens the log's files, created as long as it reaches.
                shape.files = FileSet {
                    nrfiles: log_files.len() as u32,
                    names: log_files,
                    ..FileSet::default()
                };
                shape.sized = true;
            } else {
                // A trace replays on one file: the job's first.
                if let [first, rest @ ..] = shape.files.names.as_slice() {
                    if !rest.is_empty() {
                        notes.push(format!(
                            "job {name}: a trace replays on one file: {first}, not {}",
                            rest.join(", ")
                        ));
                    }
                }
                shape.files.names.truncate(1);
                shape.files.nrfiles = 1;
            }
            shape.section = section.to_string();
            shape.after = after;
            shape.iolog_pacing = pacing;
            return Ok(Job {
                name,
                kind,
                start: self.start,
                stop: self.runtime.map(|r| self.start + shape.ramp + r),
                shape,
            });
        }
        let mut synthetic = self.synthetic.clone();
        // Checked rather than saturating: on a drive of u64::MAX bytes a
        // saturated end would pass as fitting.
        let shifted = self.first_byte.of_copy(copy);
        let end = shifted.and_then(|offset| offset.checked_add(synthetic.size));
        let past_end = end.is_none_or(|end| end > capacity);
        synthetic.offset = shifted.unwrap_or(u64::MAX);
        let left =
            capacity.saturating_sub(synthetic.offset) / synthetic.block_min * synthetic.block_min;
        match &self.cut_at_end {
            Some(given) if past_end && left > 0 => {
                if let Some(given) = given {
                    notes.push(format!(
                        "job {name}: size={given} from offset {} reaches past the end of the drive ({capacity} bytes): the job moves the {left} bytes left, as fio cuts it",
                        synthetic.offset
                    ));
                }
                synthetic.size = left;
            }
            _ if past_end => {
                let copy = match copy {
                    0 => String::new(),
                    n => format!(" (copy {n} of numjobs, moved by offset_increment)"),
                };
                return Err(FioError {
                    file: file.to_string(),
                    line: self.region_line,
                    message: format!(
                        "job [{section}]: offset {} + size {} must fit the drive ({capacity} bytes){copy}",
                        synthetic.offset, synthetic.size
                    ),
                });
            }
            _ => {}
        }
        let mut shape = self.shape.clone();
        shape.section = section.to_string();
        shape.after = after;
        if !self.time_based {
            let file_end = self.file_end(&shape, capacity);
            let size = one_pass_bytes(&synthetic, &shape, file_end)
                .map_or(synthetic.size, |b| b.min(synthetic.size))
                .min(whole_blocks(&synthetic, &shape, file_end));
            let bytes = self.io_size.unwrap_or(size);
            let loops = (self.loops, self.norandommap);
            self.verify
                .apply(&mut shape, &synthetic, (size, bytes), loops);
            if let Some(rounds) = shape.rounds.as_mut() {
                rounds.goal_given = self.io_size.is_some();
            }
            // fio's limit is `number_ios` per loop (number_ios x loops).
            shape.ios_limit = shape.ios_limit.map(|n| n.saturating_mul(self.loops));
            shape.ends_at_pass_end = self.io_size.is_none()
                && self.loops == 1
                && (shape.rounds.as_ref()).is_none_or(|r| r.read_back.is_none())
                && mix_ends_at_pass(&synthetic, &shape, file_end);
        } else {
            // fio's time_based jobs run their runtime whatever `number_ios` says.
            shape.ios_limit = None;
        }
        Ok(Job {
            name,
            kind: JobKind::Synthetic(synthetic),
            start: self.start,
            stop: self.runtime.map(|r| self.start + shape.ramp + r),
            shape,
        })
    }

    /// Where the file of a job of this section ends: a `/dev/...` ends
    /// with the drive; a file fio creates is as long as the furthest region
    /// in it: of all the copies when they share a named file, else of the
    /// copy's own (fio names a file per copy).
    fn file_end(&self, shape: &JobShape, capacity: u64) -> u64 {
        let regions_end = |copies: u32| {
            self.first_byte
                .of_copy(copies.saturating_sub(1))
                .unwrap_or(u64::MAX)
                .saturating_add(self.synthetic.size)
        };
        match shape.files.names.as_slice() {
            [name] if name.starts_with("/dev/") => capacity,
            [] => regions_end(1),
            _ => regions_end(self.numjobs),
        }
    }

    fn from_options(
        section: &Section,
        file: &str,
        capacity: u64,
        notes: &mut Vec<String>,
    ) -> Result<JobSpec, FioError> {
        let name = section.name.as_str();
        let kb_bases = kb_bases(section).map_err(|(line, message)| FioError {
            file: file.to_string(),
            line,
            message,
        })?;
        let mut reader = Reader::new(capacity);
        for ((key, value, line), &kb_base) in section.options.iter().zip(&kb_bases) {
            let err = |message: String| FioError {
                file: file.to_string(),
                line: *line,
                message,
            };
            let setting = Setting {
                key: canonical(key),
                given: key,
                value,
                line: *line,
                kb_base,
            };
            reader.option(name, &setting, notes).map_err(err)?;
        }
        let last_line = section.options.last().map_or(section.line, |o| o.2);
        let spec = reader.finish(name, file, (last_line, capacity), notes)?;
        notes.extend(spec.verify.note(name, &spec.synthetic, spec.time_based));
        Ok(spec)
    }
}

/// The one direction (read 0, write 1, trim 2) of a job that does not mix
/// reads and writes; `None` for one that does.
fn only_direction(read_percent: u32, trim: bool) -> Option<usize> {
    match (read_percent, trim) {
        (_, true) => Some(2),
        (100, false) => Some(0),
        (0, false) => Some(1),
        _ => None,
    }
}

/// Most blocks fio's random maps of a job file's jobs hold together, a bit
/// each (512 MiB): fio's map of a 4 TiB drive in 4 KiB blocks takes 128 MiB
/// a job.
pub const MAX_RANDOM_MAP_BITS: u64 = 1 << 32;

/// Counts `job`'s random map in `total`; past [`MAX_RANDOM_MAP_BITS`] the
/// job draws its offsets with replacement, as with `norandommap`, noted.
fn keep_random_map(job: &mut Job, total: &mut u64, notes: &mut Vec<String>) {
    let JobKind::Synthetic(s) = &job.kind else {
        return;
    };
    if !job.shape.random_map || s.sequential || s.align == 0 {
        return;
    }
    // Where the generator keeps no map, though fio would (draw.rs `map_unit`).
    let mixed_aligns = (job.shape.random_align)
        .is_some_and(|a| !s.trim && (1..100).contains(&s.read_percent) && a[0] != a[1]);
    let unmapped = match (job.shape.zones.is_some(), mixed_aligns) {
        (true, _) => Some("strided zones"),
        (false, true) => Some("reads and writes on different block alignments"),
        (false, false) => None,
    };
    if let Some(why) = unmapped {
        notes.push(format!(
            "job {}: a random job of {why} draws its offsets with replacement here, where fio's random map takes each block once a pass",
            job.name
        ));
        return;
    }
    // In the unit the map is built in (a block of a job finer than 512
    // bytes was once counted in sectors: a map 512 times its budget).
    let Some(unit) = crate::workload::map_unit(s, &job.shape) else {
        return;
    };
    let bits = s.size / unit;
    if *total + bits <= MAX_RANDOM_MAP_BITS {
        *total += bits;
        return;
    }
    job.shape.random_map = false;
    notes.push(format!(
        "job {}: fio's random map of its {bits} blocks would take {} MiB, more than the {} MiB iosteer keeps for the maps of a job file; the job draws its offsets with replacement, as with norandommap (its last request goes whole, past size)",
        job.name,
        (bits / 8) >> 20,
        (MAX_RANDOM_MAP_BITS / 8) >> 20
    ));
}

mod blocks;
mod controls;
mod early_end;
mod iolog_job;
mod passes;
use passes::{mix_ends_at_pass, one_pass_bytes, whole_blocks};
mod offsets;
mod reader;
mod sections;
mod values;
mod verify;
mod zones;
use blocks::Blocks;
use controls::Controls;
use early_end::{early_end_note, RandomJob};
use iolog_job::{IologJob, IologReader};
use offsets::{Offsets, Start};
use reader::Reader;
use sections::{sections, Section};
use values::{
    boolean, either, file_names, fractional, gcd, per_direction, percent, positive_count,
    positive_size, range, set_directions, signed_size, size_or_exact_percent, size_or_percent,
    Setting,
};
pub use values::{size_in, size_value, time_value};
use verify::Verify;
pub use verify::MAX_READ_BACK_PIECES;
use zones::Zones;

#[cfg(test)]
mod read_back_tests;
#[cfg(test)]
mod tests;
