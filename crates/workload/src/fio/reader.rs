//! One section's options as they are read ([`Reader`]), checked and
//! turned into the section's [`JobSpec`] when the section ends.

use super::*;

mod noted;
mod rates;
mod replay;

/// Options as they are read, before they become a [`JobSpec`].
pub(super) struct Reader {
    /// The drive's bytes, for sizes given as percentages.
    capacity: u64,
    /// How the `rw` modifier's size is read (fio's `kb_base` where `rw` was).
    rw_base: KbBase,
    rw: String,
    rw_modifier: Option<String>,
    mix_read: Option<u32>,
    /// `bs`, `bsrange`, `bssplit` and how sizes are drawn ([`Blocks`]).
    blocks: Blocks,
    size: Option<u64>,
    /// `size` as written when a percentage (fio cuts it at the end).
    size_percent: Option<String>,
    /// fio's `filesize` (each file's bytes).
    filesize: Option<u64>,
    /// `offset`, `offset_increment`, `offset_align` ([`Offsets`]).
    offsets: Offsets,
    arrival: Arrival,
    /// fio's `rate` and `rate_iops` per direction (read, write, trim).
    rate: [Option<u64>; 3],
    rate_iops: [Option<f64>; 3],
    blockalign: Option<[Option<u64>; 3]>,
    /// fio's `norandommap`: it draws random offsets with replacement, as
    /// iosteer always does.
    norandommap: bool,
    start: Nanos,
    runtime: Option<Nanos>,
    time_based: bool,
    numjobs: u32,
    hint: LifetimeHint,
    backpressure: Option<Nanos>,
    trim_ahead: Option<u64>,
    shape: JobShape,
    stonewall: bool,
    wait_for: Vec<(String, usize)>,
    io_size: Option<u64>,
    /// fio's `io_size=N%`: that share of `size` (0: as if not given).
    io_size_percent: Option<f64>,
    loops: u64,
    fill_device: bool,
    /// fio's verification options.
    verify: Verify,
    /// Latency target, priorities, the engine ([`Controls`]).
    controls: Controls,
    /// `read_iolog` and the `replay_*` options ([`IologReader`]).
    iolog: IologReader,
    /// fio's strided zones ([`Zones`]).
    zones: Zones,
    /// fio's `group_reporting` and `new_group`, from [`Controls`].
    group_reporting: bool,
    new_group: bool,
    /// The line of the last option that placed the job's region (`size`,
    /// `offset`...): where a region past the drive's end is blamed.
    region_line: Option<usize>,
    /// The line of the last rate option, where [`Self::check_rates`] blames.
    rate_line: Option<usize>,
    /// fio's `end_fsync` and `fsync_on_close`.
    end_syncs: [bool; 2],
}

impl Reader {
    pub(super) fn new(capacity: u64) -> Reader {
        Reader {
            capacity,
            rw_base: KbBase::Binary,
            rw: "read".into(),
            rw_modifier: None,
            mix_read: None,
            blocks: Blocks::default(),
            size: None,
            size_percent: None,
            filesize: None,
            offsets: Offsets::default(),
            arrival: Arrival {
                iops: None,
                bytes_per_s: None,
                poisson: false,
                iodepth: 1,
                thinktime: Nanos::ZERO,
            },
            rate: [None; 3],
            rate_iops: [None; 3],
            blockalign: None,
            norandommap: false,
            start: Nanos::ZERO,
            runtime: None,
            time_based: false,
            numjobs: 1,
            hint: LifetimeHint::None,
            backpressure: None,
            trim_ahead: None,
            shape: JobShape {
                direct: Some(false),
                rate_catches_up: true,
                ..JobShape::default()
            },
            stonewall: false,
            wait_for: Vec::new(),
            io_size: None,
            io_size_percent: None,
            loops: 1,
            fill_device: false,
            verify: Verify::default(),
            controls: Controls::default(),
            iolog: IologReader::default(),
            zones: Zones::default(),
            group_reporting: false,
            new_group: false,
            region_line: None,
            rate_line: None,
            end_syncs: [false; 2],
        }
    }

    /// Reads one option (`key` canonical, `given` as written); an error
    /// is the message, the caller adds file and line.
    pub(super) fn option(
        &mut self,
        job: &str,
        setting: &Setting,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        let Setting {
            key,
            given,
            value,
            line,
            ..
        } = *setting;
        let bad = |expected: &str| setting.bad(expected);
        let (capacity, base) = (self.capacity, setting.kb_base);
        if matches!(key, "size" | "filesize" | "offset" | "offset_increment") {
            self.region_line = Some(line);
        }
        if self.iolog.option(setting)? || self.verify.option(setting)? {
            return Ok(());
        }
        match key {
            "rw" => {
                const MODES: &[&str] = &[
                    "read",
                    "write",
                    "randread",
                    "randwrite",
                    "rw",
                    "readwrite",
                    "randrw",
                    "trim",
                    "randtrim",
                    "trimwrite",
                ];
                let (mode, modifier) = match value.split_once(':') {
                    Some((m, n)) => (m, Some(n.trim().to_string())),
                    None => (value, None),
                };
                if mode == "randtrimwrite" {
                    return Err(format!("job [{job}]: option `{given}={value}`: fio's random trim-then-write is not modelled; {}, optionally with :N, are", MODES.join(", ")));
                }
                if !MODES.contains(&mode) {
                    return Err(bad(&format!("{}, optionally with :N", MODES.join(", "))));
                }
                self.rw = mode.to_string();
                self.rw_modifier = modifier;
                self.rw_base = base;
            }
            "rw_sequencer" => {
                self.shape.same_offset =
                    either(value, ("sequential", "identical")).map_err(|e| bad(&e))?
            }
            "rwmixread" => {
                self.mix_read = Some(percent(value).ok_or_else(|| bad("a percentage 0-100"))?)
            }
            "rwmixwrite" => {
                self.mix_read = Some(100 - percent(value).ok_or_else(|| bad("a percentage 0-100"))?)
            }
            _ if self.blocks.option(setting)? => {}
            // fio reads `size=0` (`0%`) as no size: the whole file or drive.
            "size" => {
                let given = size_or_exact_percent(value, capacity, base)
                    .ok_or_else(|| bad("a size or a percentage"))?;
                self.size = size_or_percent(value, capacity, base).filter(|_| given.0 > 0);
                self.size_percent = given.1.then(|| value.to_string());
                let sized = self.size.is_some() || self.filesize.is_some();
                self.shape.sized = sized || self.fill_device;
            }
            // fio's `filesize` is each file's size (`size` the job's total).
            "filesize" => {
                if let Some((lo, hi)) = range(value) {
                    return Err(format!(
                        "option `{given}={value}`: a range of file sizes ({lo} to {hi}: fio draws each file's size in it at random) is not modelled; give one size"
                    ));
                }
                self.shape.sized = true;
                self.filesize = Some(
                    size_or_percent(value, capacity, base)
                        .ok_or_else(|| bad("a size or a percentage (one size per file)"))?,
                )
            }
            // fio: "io_size=N%: io_size multiplies size= value" (0% leaves
            // it unset; past 100% fio fails the job).
            "io_size" => {
                let expected = "a size, or a percentage of size from 0 to 100";
                (self.io_size, self.io_size_percent) = match value.strip_suffix('%') {
                    Some(p) => {
                        let p = Some(p.trim())
                            .filter(|p| !fractional(p))
                            .and_then(|p| p.parse::<f64>().ok())
                            .filter(|p| (0.0..=100.0).contains(p))
                            .ok_or_else(|| bad(expected))?;
                        (None, (p > 0.0).then_some(p))
                    }
                    // 0 is fio's default: `size`.
                    None => {
                        let bytes = size_in(value, base).ok_or_else(|| bad(expected))?;
                        ((bytes > 0).then_some(bytes), None)
                    }
                };
            }
            "number_ios" => {
                // 0, fio's default, sets no limit.
                let count: u64 = value.parse().map_err(|_| bad("a count (0: no limit)"))?;
                self.shape.ios_limit = (count > 0).then_some(count);
            }
            "fill_device" => {
                self.fill_device = boolean(value).ok_or_else(|| bad("0 or 1"))?;
                self.shape.sized |= self.fill_device;
            }
            // fio runs a job of loops=0 once, as of loops=1.
            // fio keeps it in 32 bits (4294967296 wraps to one pass there).
            "loops" => {
                let loops: u32 = value
                    .parse()
                    .map_err(|_| bad("a count, at most 4294967295 (fio keeps it in 32 bits)"))?;
                self.loops = u64::from(loops.max(1));
            }
            _ if self.offsets.option(setting, capacity)? => {}
            "iodepth" => {
                self.arrival.iodepth = value
                    .parse()
                    .ok()
                    .filter(|d| (1..=MAX_IODEPTH).contains(d))
                    .ok_or_else(|| bad("an integer from 1 to 65536"))?
            }
            _ if self.rate_option(job, setting, notes)? => {}
            "rate_process" => {
                self.arrival.poisson = either(value, ("linear", "poisson")).map_err(|e| bad(&e))?
            }
            "startdelay" => {
                if let Some((lo, hi)) = range(value) {
                    return Err(format!(
                        "option `{given}={value}`: a range of delays ({lo} to {hi}: fio draws each job's delay in it at random) is not modelled; give one time"
                    ));
                }
                self.start = time_value(value, 1_000_000_000)
                    .ok_or_else(|| bad("a time such as 10s or 500ms"))?
            }
            // As in fio, `runtime=0` is no limit (not a job that ends at once).
            "runtime" => {
                self.runtime = Some(
                    time_value(value, 1_000_000_000).ok_or_else(|| bad("a time such as 60s"))?,
                )
                .filter(|r| *r > Nanos::ZERO)
            }
            "ramp_time" => {
                self.shape.ramp =
                    time_value(value, 1_000_000_000).ok_or_else(|| bad("a time such as 5s"))?
            }
            "time_based" => {
                self.time_based = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?
            }
            "thinktime" => {
                self.arrival.thinktime = time_value(value, 1_000)
                    .ok_or_else(|| bad("a time, microseconds unless suffixed"))?
            }
            // 0 thinks after every request, as 1 does in fio.
            "thinktime_blocks" => {
                self.shape.thinktime_blocks = value.parse().map_err(|_| bad("a count"))?
            }
            "numjobs" => {
                self.numjobs = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=1024).contains(n))
                    .ok_or_else(|| bad("an integer from 1 to 1024"))?
            }
            "stonewall" => self.stonewall = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?,
            "wait_for" => {
                if value.is_empty() {
                    return Err(bad("the name of an earlier job"));
                }
                self.wait_for.push((value.to_string(), line));
            }
            "random_distribution" => {
                self.shape.distribution =
                    Distribution::parse(value).ok_or_else(|| bad(distribution::ACCEPTED))?;
                if let Some(layout) = self.shape.distribution.layout_differs() {
                    notes.push(format!("job {job}: {given}={value}: {layout}"));
                }
            }
            "blockalign" => {
                let aligns = per_direction(value, |t| positive_size(t, base))
                    .ok_or_else(|| bad("a size such as 4k, or read,write,trim sizes"))?;
                let mut current = self.blockalign.unwrap_or([None; 3]);
                set_directions(&mut current, aligns.map(|a| a.map(Some)));
                self.blockalign = Some(current);
            }
            "percentage_random" => {
                let given = per_direction(value, percent).ok_or_else(|| {
                    bad("a percentage 0-100, or up to three for reads, writes and trims (`0,100`, `,50`)")
                })?;
                let mut current = self.shape.percentage_random.unwrap_or([100; 3]);
                set_directions(&mut current, given);
                self.shape.percentage_random = Some(current);
            }
            "norandommap" => {
                self.norandommap = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?;
            }
            "randrepeat" => {
                if !boolean(value).ok_or_else(|| bad("0 or 1"))? {
                    notes.push(format!(
                        "job {job}: randrepeat=0: draws here repeat for a given --seed; vary --seed for other draws"
                    ));
                }
            }
            "randseed" => {
                value.parse::<u64>().map_err(|_| bad("an integer"))?;
                notes.push(format!(
                    "job {job}: randseed={value} is not used: --seed seeds every job (give --seed {value} for a seed of your choosing)"
                ));
            }
            // Named files are the job's files, whatever nrfiles says
            // (fio 3.33: `filename=a nrfiles=3` writes `a` alone).
            "nrfiles" => {
                let nrfiles = value
                    .parse()
                    .ok()
                    .filter(|n| (0..=4096).contains(n))
                    .ok_or_else(|| bad("a count from 0 to 4096 (0 and 1: one file)"))?;
                if self.shape.files.names.is_empty() {
                    self.shape.files.nrfiles = nrfiles;
                }
            }
            "filename" => {
                self.shape.files.names = file_names(value);
                self.shape.files.nrfiles = self.shape.files.names.len() as u32;
            }
            "directory" => {
                if value.is_empty() || value.contains(':') {
                    return Err(bad(
                        "one directory (a `:` list of several is not supported)",
                    ));
                }
                self.shape.files.directory = Some(value.to_string());
            }
            "file_service_type" => {
                self.shape.files.service = FileService::parse(value)
                    .ok_or_else(|| bad(crate::job_shape::FILE_SERVICES))?
            }
            "fsync" | "fdatasync" => {
                let every: u32 = value
                    .parse()
                    .map_err(|_| bad("a count of writes (0: never)"))?;
                let cadence = match key {
                    "fsync" => &mut self.shape.flush_every,
                    _ => &mut self.shape.datasync_every,
                };
                *cadence = (every > 0).then_some(every);
            }
            "direct" | "buffered" => {
                let on = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?;
                self.shape.direct = Some(on == (key == "direct"));
            }
            // Two options, one sync at the end here: either asks for it.
            "end_fsync" | "fsync_on_close" => {
                let on = boolean(value).ok_or_else(|| bad("0 or 1"))?;
                self.end_syncs[usize::from(key == "fsync_on_close")] = on;
                self.shape.end_flush = self.end_syncs.contains(&true);
            }
            "fallocate" => {
                self.shape.sparse = match value {
                    "none" | "0" | "truncate" => true,
                    "native" | "posix" | "keep" | "1" => false,
                    _ => return Err(bad("none, native, posix, keep, truncate, 0 or 1")),
                }
            }
            "write_hint" => {
                self.hint = LifetimeHint::ALL
                    .into_iter()
                    .find(|h| h.name() == value)
                    .ok_or_else(|| bad("none, short, medium, long or extreme"))?
            }
            "ioengine" => {
                check_engine(value)?;
                if value.starts_with("spdk") {
                    notes.push(format!(
                        "job {job}: ioengine={value} (SPDK's plugin) is block I/O as any engine here; its filename names an SPDK device or bdev, which iosteer run cannot open: there it would be a file of that name"
                    ));
                }
                self.controls.engine = Some(value.to_string());
            }
            _ if self.controls.option(setting)? => {}
            k if controls::DEPRECATED.contains(&k) => {
                return Err(format!(
                    "job [{job}]: option `{given}` is deprecated in fio, which refuses it too (\"Option {k} is deprecated\", and fio drops the job): remove the line"
                ))
            }
            // Read for each section before its options (`fio::kb_bases`).
            "kb_base" => {}
            _ if self.zones.option(setting)? => {}
            _ if noted::option(job, setting, notes)? => {}
            "allow_file_create" => {
                let allowed = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?;
                self.shape.no_create = !allowed;
            }
            "iosteer_trim_ahead" => {
                self.trim_ahead =
                    Some(positive_size(value, base).ok_or_else(|| bad("a size, such as 64m"))?)
            }
            "iosteer_rate_resumes" => {
                let resumes = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?;
                self.shape.rate_catches_up = !resumes;
            }
            "iosteer_backpressure" => {
                self.backpressure = Some(
                    time_value(value, 1_000)
                        .ok_or_else(|| bad("a time, microseconds unless suffixed, such as 50ms"))?,
                )
            }
            "sync" => {
                self.shape.write_sync = match value {
                    "0" | "none" => WriteSync::None,
                    "1" | "sync" => WriteSync::Sync,
                    "dsync" => WriteSync::Dsync,
                    _ => return Err(bad("none or 0 (fio's default), sync or 1 (O_SYNC), dsync (O_DSYNC)")),
                };
                if self.shape.write_sync.fua() {
                    notes.push(format!(
                        "job {job}: sync={value}: its writes are sent FUA (forced unit access), as Linux sends an O_SYNC or O_DSYNC direct write (a buffered one reaches the drive as a write and a flush; jobs here reach the drive as direct ones): each completes once on stable media, so a drive with a volatile write-back cache programs it first; to other drives it is a plain write"
                    ));
                }
            }
            "serialize_overlap" => {
                self.shape.serialize_overlap = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?
            }
            "name" => {}
            k if IGNORED.contains(&k) => {}
            k if REFUSED.iter().any(|(o, _)| *o == k) => {
                let why = REFUSED.iter().find(|(o, _)| *o == k).map_or("", |(_, why)| why);
                return Err(format!("job [{job}]: option `{given}` is not supported here: {why}; remove the line"));
            }
            _ => {
                let hint = near_miss(given)
                    .map_or_else(String::new, |known| format!(" (did you mean `{known}`?)"));
                return Err(format!(
                    "job [{job}]: option `{given}` is not supported here{hint}: it is neither an option \
                     iosteer models nor one it knows changes only reporting, logging, CPU placement, \
                     engine tuning, buffer contents or verification settings (those are accepted and \
                     ignored), and a fio option that changes the I/O issued cannot be left out silently; \
                     supported: {}",
                    [SUPPORTED, REPLAY, TRACE].concat().join(", ")
                ));
            }
        }
        Ok(())
    }

    pub(super) fn finish(
        mut self,
        job: &str,
        file: &str,
        (last_line, capacity): (usize, u64),
        notes: &mut Vec<String>,
    ) -> Result<JobSpec, FioError> {
        let err = |message: String| FioError {
            file: file.to_string(),
            line: last_line,
            message: format!("job [{job}]: {message}"),
        };
        // The simulator's clock ends at 2^62 ns: a job past it would stop
        // short (fifo: 2,074 s of a 3,600 s runtime) or never (steer).
        let ends = (self.start.0)
            .saturating_add(self.shape.ramp.0)
            .saturating_add(self.runtime.map_or(0, |r| r.0));
        if ends > crate::trace::MAX_ARRIVAL.0 {
            return Err(err(format!(
                "startdelay, ramp_time and runtime end {:.4e} s after the start, past the latest \
                 time the simulator can represent, {:.4e} s (2^62 ns, 146 years)",
                ends as f64 / 1e9,
                crate::trace::MAX_ARRIVAL.as_secs_f64()
            )));
        }
        let controls = std::mem::take(&mut self.controls);
        (self.group_reporting, self.new_group) = (controls.group_reporting, controls.new_group);
        controls.cap_iodepth(job, &mut self.arrival.iodepth, notes);
        controls
            .finish(job, self.arrival.iodepth, &mut self.shape, notes)
            .map_err(|(line, message)| FioError {
                file: file.to_string(),
                line,
                message,
            })?;
        let iolog =
            std::mem::take(&mut self.iolog)
                .finish(job, notes)
                .map_err(|(line, message)| FioError {
                    file: file.to_string(),
                    line,
                    message,
                })?;
        if let Some(iolog) = iolog {
            return Ok(self.replay_spec(iolog, last_line));
        }
        // fio's trimwrite trims each block and then writes it, in order
        // (`workload::trims_ahead`).
        let trimwrite = self.rw == "trimwrite";
        if trimwrite && self.trim_ahead.is_some() {
            return Err(err(
                "rw=trimwrite trims each block before writing it; iosteer_trim_ahead does not go with it"
                    .into(),
            ));
        }
        if trimwrite {
            notes.push(format!(
                "job {job}: rw=trimwrite sends each write once its trim has completed, as fio does; a policy that holds trims back for writes to cut them (steer, netflix with a trim goal) holds the job with them"
            ));
        }
        let sequential = matches!(
            self.rw.as_str(),
            "read" | "write" | "rw" | "readwrite" | "trim" | "trimwrite"
        );
        let read_percent = match self.rw.as_str() {
            "read" | "randread" => 100,
            "write" | "randwrite" | "trim" | "randtrim" | "trimwrite" => 0,
            _ => self.mix_read.unwrap_or(50),
        };
        if self.trim_ahead.is_some() && self.rw != "write" {
            return Err(err(format!(
                "iosteer_trim_ahead: trims ahead of sequential writes, and rw={} is not rw=write",
                self.rw
            )));
        }
        if let Some(modifier) = &self.rw_modifier {
            if sequential {
                self.shape.offset_add = signed_size(modifier, self.rw_base)
                    .ok_or_else(|| err(format!("rw={}:{modifier}: expected a size (bytes between requests, negative to go back)", self.rw)))?;
            } else {
                self.shape.ios_per_offset = positive_count(modifier).ok_or_else(|| {
                    err(format!(
                        "rw={}:{modifier}: expected a count of requests per random offset",
                        self.rw
                    ))
                })?;
            }
        }
        let plan = std::mem::take(&mut self.blocks).finish(job, notes);
        if trimwrite {
            notes.extend(plan.trimwrite_note(job));
        }
        let (bs_min, align, own_blocks) = (plan.min, plan.align, plan.own);
        self.shape.blocks.clone_from(&plan.splits);
        self.shape.blocks_by_randomness = plan.by_randomness;
        let min_block = |direction: usize| own_blocks[direction];
        // fio aligns random offsets on each direction's smallest block
        // unless `blockalign` says otherwise (a blank direction keeps it):
        // `bs=4k,1000` reads on 4 KiB, writes on 1000 bytes.
        self.shape.random_align = match self.blockalign {
            Some(given) => Some([0, 1, 2].map(|d| given[d].unwrap_or(own_blocks[d]))),
            None => own_blocks.iter().any(|&b| b != align).then_some(own_blocks),
        };
        let trim = matches!(self.rw.as_str(), "trim" | "randtrim");
        let issued = match only_direction(read_percent, trim) {
            Some(direction) => vec![direction],
            None => vec![0, 1],
        };
        // Only the directions the job issues count: `rw=randread
        // percentage_random=100,0` reads at random, as without it.
        self.shape.percentage_random = self
            .shape
            .percentage_random
            .filter(|p| issued.iter().any(|&d| p[d] < 100));
        // fio draws no random offset where every direction the job issues
        // is 0% random: the job runs as its sequential twin (fio 3.33,
        // `rw=randread bs=12k size=512k percentage_random=0`: 42 whole
        // blocks, as `rw=read`; `rw=randrw` as `rw=rw`, request for
        // request). Runs of `rw_sequencer=identical` still repeat offsets.
        let never_random = self
            .shape
            .percentage_random
            .is_some_and(|p| issued.iter().all(|&d| p[d] == 0));
        let sequential = sequential
            || (never_random && !(self.shape.same_offset && self.shape.ios_per_offset > 1));
        if sequential {
            (self.shape.percentage_random, self.shape.ios_per_offset) = (None, 0);
        }
        if !sequential && !never_random {
            let random_align = self.shape.random_align.unwrap_or([align; 3]);
            plan.check_seq_rand(random_align, &issued).map_err(err)?;
            if self.norandommap {
                let service = std::mem::take(&mut self.shape.files.service);
                self.shape.files.service = service.for_random_without_map();
            }
            let random_align = self.shape.random_align.unwrap_or(own_blocks);
            self.shape.random_map_renews = (self.time_based && self.runtime.is_some())
                || matches!(&self.shape.files.service, FileService::Drawn { distribution, .. } if *distribution != Distribution::Uniform);
            self.shape.random_map = !self.norandommap
                && self.shape.distribution == Distribution::Uniform
                && random_align == own_blocks
                && self.shape.ios_per_offset <= 1;
            let random = RandomJob {
                blocks: own_blocks,
                align: random_align,
                issued: &issued,
                distribution: &self.shape.distribution,
                norandommap: self.norandommap,
                passes_again: (self.time_based && self.runtime.is_some())
                    || self.io_size.is_some()
                    || self.io_size_percent.is_some(),
            };
            notes.extend(early_end_note(job, &random));
            // fio 3.33 carries the random map of a job whose requests also
            // follow on into its next loop (`rw=randwrite bs=4k size=1m
            // percentage_random=50 loops=2`: 512 writes on all 256 blocks,
            // the second loop's random ones on blocks the first left), and
            // ends a loop once it is full, making up the bytes after the last.
            if self.shape.random_map && self.shape.percentage_random.is_some() && self.loops > 1 {
                notes.push(format!("job [{job}]: fio keeps the random map of a job with percentage_random from one loop to the next; iosteer starts it anew each loop, so later loops' random requests may take blocks fio's would leave to later (the bytes are the same)"));
            }
        }
        self.check_rates().map_err(|(line, message)| FioError {
            file: file.to_string(),
            line,
            message: format!("job [{job}]: {message}"),
        })?;
        // `rate` and `rate_iops` never both cap a direction ([`Self::check_rates`]).
        let rate = |direction: usize| {
            self.rate[direction].map(|b| b as f64).or_else(|| {
                self.rate_iops[direction].map(|iops| iops * min_block(direction) as f64)
            })
        };
        match only_direction(read_percent, trim) {
            Some(direction) => self.arrival.bytes_per_s = rate(direction),
            None => {
                let rates = [rate(0), rate(1)];
                self.shape.direction_rates = rates.iter().any(Option::is_some).then_some(rates);
            }
        }
        // `filesize` is per file: the job's region is that times its files,
        // as fio sizes them. A smaller `size` is then the bytes to move (as
        // `io_size`), a larger one is cut to the region (noted), as fio
        // does with `size=100m filesize=1g` (100 MiB moved) and `size=4g
        // filesize=256m nrfiles=2` (512 MiB).
        let mut size_cut = None;
        let given_size = self.size;
        if let Some(per_file) = self.filesize {
            let total = per_file.saturating_mul(self.shape.files.count());
            match self.size {
                Some(size) if size < total => self.io_size = self.io_size.or(Some(size)),
                Some(size) if size > total => size_cut = Some((size, total)),
                _ => {}
            }
            self.size = Some(total);
        }
        // fio rounds a percentage start up to its smallest block (`td_min_bs`).
        let start = self
            .offsets
            .finish(own_blocks.into_iter().min().unwrap_or(bs_min));
        let offset = start.of_copy(0).unwrap_or(u64::MAX);
        let size = match (self.fill_device, self.size) {
            (true, _) | (false, None) => capacity.saturating_sub(offset),
            (false, Some(size)) => size,
        };
        let cut_at_end = match (self.fill_device || self.size.is_none(), &self.size_percent) {
            (true, _) => Some(None),
            (false, Some(given)) if self.filesize.is_none() => Some(Some(given.clone())),
            (false, _) => None,
        };
        if let Some(p) = self.io_size_percent {
            let of = given_size.unwrap_or(size);
            self.io_size = Some(((of as f64 * p / 100.0) as u64).max(1));
        }
        // fio cuts a percentage `size` that reaches past the end to what
        // is left after `offset`, in whole smallest blocks (fio 3.33:
        // `offset=60% size=60%` of 2 MiB reads the last 835,584 bytes).
        let size = match &self.size_percent {
            Some(given)
                if self.filesize.is_none()
                    && !self.fill_device
                    && offset < capacity
                    && offset.saturating_add(size) > capacity =>
            {
                let left = (capacity - offset) / bs_min * bs_min;
                notes.push(format!(
                    "job {job}: size={given} from offset {offset} reaches past the end of the drive ({capacity} bytes): the job moves the {left} bytes left, as fio cuts it"
                ));
                left
            }
            _ => size,
        };
        if offset.checked_add(size).is_none_or(|end| end > capacity) {
            return Err(FioError {
                line: self.region_line.unwrap_or(last_line),
                ..err(format!(
                    "offset {offset} + size {size} must fit the drive ({capacity} bytes)"
                ))
            });
        }
        let files = self.shape.files.count();
        let per_file = size / files;
        plan.check_fits(size, files, &issued).map_err(err)?;
        self.shape.zones = std::mem::take(&mut self.zones)
            .finish(job, (files, size / files), (sequential, bs_min), notes)
            .map_err(|(line, message)| FioError {
                file: file.to_string(),
                line,
                message,
            })?;
        let bs_max = plan.largest_fitting(per_file);
        self.shape.verify = self.verify.method.clone();
        // fio syncs only a job that writes (`should_fsync`).
        self.shape.end_flush &= read_percent < 100 && !trim;
        Ok(JobSpec {
            verify: self.verify,
            norandommap: self.norandommap,
            synthetic: Synthetic {
                read_percent,
                trim,
                sequential,
                block_min: bs_min,
                block_max: bs_max,
                align,
                offset,
                size,
                arrival: self.arrival,
                trim_ahead: self.trim_ahead,
                hint: self.hint,
                backpressure: self.backpressure,
            },
            shape: JobShape {
                writes_after_trims: trimwrite,
                ..self.shape
            },
            start: self.start,
            runtime: self.runtime,
            size_cut,
            cut_at_end,
            // fio: "time_based requires a runtime/timeout setting", and
            // drops it (the caller notes it).
            time_based: self.time_based && self.runtime.is_some(),
            time_based_ignored: self.time_based && self.runtime.is_none(),
            numjobs: self.numjobs,
            first_byte: start,
            stonewall: self.stonewall,
            new_group: self.new_group,
            group_reporting: self.group_reporting,
            wait_for: self.wait_for,
            io_size: self.io_size,
            loops: self.loops,
            last_line,
            region_line: self.region_line.unwrap_or(last_line),
            iolog: None,
        })
    }
}
