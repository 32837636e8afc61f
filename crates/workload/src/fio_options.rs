//! Which fio options the job parser takes ([`SUPPORTED`]), accepts and
//! ignores ([`IGNORED`]: they change how fio reports, logs, places threads,
//! tunes its engine or checks data, not which I/O is issued or when), and
//! under which other names ([`canonical`]); and which engines it can model
//! ([`check_engine`]). Any other option is an error naming the file, the
//! line and the option ([`crate::fio`]).

/// Options that shape the I/O and are modelled, by their canonical names.
pub const SUPPORTED: &[&str] = &[
    "rw",
    "rw_sequencer",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "bsrange",
    "bssplit",
    "blocksize_unaligned",
    "bs_is_seq_rand",
    "size",
    "filesize",
    "io_size",
    "number_ios",
    "fill_device",
    "loops",
    "offset",
    "offset_increment",
    "offset_align",
    "iodepth",
    "iodepth_low",
    "iodepth_batch_complete_min",
    "max_latency",
    "rate",
    "rate_iops",
    "rate_process",
    "rate_min",
    "rate_iops_min",
    "rate_cycle",
    "startdelay",
    "runtime",
    "time_based",
    "direct",
    "buffered",
    "ramp_time",
    "thinktime",
    "thinktime_blocks",
    "numjobs",
    "stonewall",
    "wait_for",
    "random_distribution",
    "percentage_random",
    "blockalign",
    "norandommap",
    "random_generator",
    "filename_format",
    "randrepeat",
    "randseed",
    "nrfiles",
    "filename",
    "directory",
    "file_service_type",
    "fsync",
    "fdatasync",
    "end_fsync",
    "fsync_on_close",
    "verify",
    "do_verify",
    "verify_backlog",
    "verify_backlog_batch",
    "verify_only",
    "fallocate",
    "write_hint",
    "ioengine",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
    "zonecapacity",
    "exitall",
    "exec_prerun",
    "exec_postrun",
    "pre_read",
    "allow_file_create",
    "nowait",
    "name",
    "latency_target",
    "latency_window",
    "latency_percentile",
    "latency_run",
    "flow",
    "flow_id",
    "flow_sleep",
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "iosteer_backpressure",
    "iosteer_trim_ahead",
    "iosteer_rate_resumes",
    "numruns",
    "write_barrier",
    "serialize_overlap",
    "create_only",
    "sync_file_range",
    "readfua",
    "writefua",
];

/// A replay's options (`fio::iolog_job`): modelled too, and the
/// only ones a replay takes besides its timing and identity.
pub const REPLAY: &[&str] = &[
    "read_iolog",
    "read_iolog_chunked",
    "replay_no_stall",
    "replay_time_scale",
    "replay_skip",
    "replay_align",
    "replay_scale",
    "replay_redirect",
];

/// A job that replays a trace of any format open loop, as `iosteer sim
/// --trace` does (iosteer's own options; `fio::iolog_job`): the file, and
/// the trace options of the command line.
pub const TRACE: &[&str] = &[
    "iosteer_trace",
    "iosteer_trace_format",
    "iosteer_trace_unit",
    "iosteer_trace_window",
    "iosteer_trace_fit",
    "iosteer_trace_event",
    "iosteer_trace_speed",
    "iosteer_trace_devices",
];

/// Accepted and ignored: they do not change which I/O is issued or when.
pub const IGNORED: &[&str] = &[
    // Reporting and logging.
    "description",
    // Reporting groups: read by `fio::controls` too, for steady state.
    "group_reporting",
    "new_group",
    "stats",
    "per_job_logs",
    "write_lat_log",
    "write_bw_log",
    "write_iops_log",
    "write_hist_log",
    "write_iolog",
    "log_avg_msec",
    "log_hist_msec",
    "log_hist_coarseness",
    "log_max_value",
    "log_offset",
    "log_compression",
    "log_compression_cpus",
    "log_store_compressed",
    "log_unix_epoch",
    "log_alternate_epoch",
    "log_alternate_epoch_clock_id",
    "log_prio",
    "log_entries",
    "clat_percentiles",
    "slat_percentiles",
    "lat_percentiles",
    "percentile_list",
    "disable_lat",
    "disable_clat",
    "disable_slat",
    "disable_bw",
    "unified_rw_reporting",
    "unit_base",
    "bwavgtime",
    "iopsavgtime",
    "gtod_reduce",
    "gtod_cpu",
    "clocksource",
    "significant_figures",
    "disk_util",
    "block_error_percentiles",
    // CPU, NUMA and process placement.
    "thread",
    // `atomic`: Linux has no O_ATOMIC, and fio 3.33 there issues plain
    // direct I/O (a 64 KiB read job with atomic=1 ran as without it).
    "atomic",
    // The tiobench profile's count of threads: without `profile=tiobench`
    // fio 3.33 takes it and does nothing with it (two of fio's own
    // examples set it).
    "threads",
    "cpus_allowed",
    "cpus_allowed_policy",
    "cpumask",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "nice",
    "prio",
    "prioclass",
    "uid",
    "gid",
    "cgroup",
    "cgroup_weight",
    "cgroup_nodelete",
    // Engine tuning, memory and how files are opened.
    "ioscheduler",
    "iodepth_batch_submit",
    "iodepth_batch_complete_max",
    "io_submit_mode",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "sqthread_poll_cpu",
    "cmd_type",
    // SPDK's plugins' set-up: configuration files, memory, transports.
    "spdk_conf",
    "spdk_json_conf",
    "spdk_mem",
    "spdk_single_seg",
    "mem_size_mb",
    "shm_id",
    "enable_sgl",
    "sge_size",
    "hostnqn",
    "enable_vmd",
    "digest_enable",
    "disable_pcie_sgl_merge",
    "print_qid_mappings",
    "spdk_tracing",
    "log_flags",
    "rpc_listen_addr",
    "hipri",
    "hipri_percentage",
    "userspace_reap",
    "nonvectored",
    "uncached",
    "force_async",
    "iomem",
    "iomem_align",
    "hugepage-size",
    "lockmem",
    "invalidate",
    "create_serialize",
    "create_fsync",
    "create_on_open",
    "allow_mounted_write",
    "unlink",
    "unlink_each_loop",
    "fadvise_hint",
    "overwrite",
    "unique_filename",
    // How a think time is spent (spinning, then sleeping): its length is
    // `thinktime`'s.
    "thinktime_spin",
    "lockfile",
    "allrandrepeat",
    "softrandommap",
    "continue_on_error",
    "ignore_error",
    "error_dump",
    // Data content (the drive model does not compress or deduplicate).
    "buffer_pattern",
    "buffer_compress_percentage",
    "buffer_compress_chunk",
    "refill_buffers",
    "scramble_buffers",
    "zero_buffers",
    "dedupe_percentage",
    "dedupe_mode",
    "dedupe_global",
    "dedupe_working_set_percentage",
    // Verification settings (`verify` itself is kept on the job).
    "verify_interval",
    "verify_offset",
    "verify_pattern",
    "verify_fatal",
    "verify_dump",
    "verify_async",
    "verify_async_cpus",
    "verify_state_save",
    "verify_state_load",
    "verify_header_seed",
    "verify_write_sequence",
    "experimental_verify",
];

/// fio options that change the I/O and are refused, each with why.
pub const REFUSED: &[(&str, &str)] = &[
    ("openfiles", "fio keeps at most that many of the job's files open and serves only those until each has moved its size (openfiles=1 of nrfiles=4: one file after another; norandommap: the first files only), waiting for completions each time it meets a closed one; iosteer serves every file"),
    ("file_append", "fio starts at the end of the existing file; the simulated drive has no files to append to (use offset)"),
];

/// fio's other names for an option, mapped to the name used here.
pub fn canonical(key: &str) -> &str {
    match key {
        "readwrite" => "rw",
        "blocksize" => "bs",
        "ba" => "blockalign",
        "blocksize_range" => "bsrange",
        "bs_unaligned" => "blocksize_unaligned",
        "timeout" => "runtime",
        "io_limit" => "io_size",
        "fill_fs" => "fill_device",
        "fileoffset" => "offset",
        "wait_for_previous" => "stonewall",
        "iodepth_batch" => "iodepth_batch_submit",
        "iodepth_batch_complete" => "iodepth_batch_complete_min",
        "disable_bw_measurement" => "disable_bw",
        "cpumask" => "cpus_allowed",
        "exitall_on_error" | "exit_what" => "exitall",
        "ss" => "steadystate",
        "ss_dur" => "steadystate_duration",
        "ss_ramp" => "steadystate_ramp_time",
        "mem" => "iomem",
        "mem_align" => "iomem_align",
        "nr_files" => "nrfiles",
        other => other,
    }
}

/// Engines that issue block I/O to a file or device: modelled.
pub const ENGINES: &[&str] = &[
    "sync",
    "psync",
    "vsync",
    "pvsync",
    "pvsync2",
    "libaio",
    "io_uring",
    "io_uring_cmd",
    "posixaio",
    "solarisaio",
    "windowsaio",
    "mmap",
    "splice",
    "sg",
    "xnvme",
    // SPDK's plugins: NVMe and bdev block I/O from user space.
    "spdk",
    "spdk_bdev",
];

/// Engines that do something the project cannot model, and why.
const REFUSED_ENGINES: &[(&str, &str)] = &[
    ("net", "network I/O"),
    ("netsplice", "network I/O"),
    ("rdma", "network I/O (RDMA)"),
    ("http", "network I/O (HTTP/S3/Swift)"),
    ("nbd", "network I/O (NBD)"),
    ("nfs", "network file system I/O"),
    ("rados", "a Ceph cluster"),
    ("rbd", "a Ceph cluster"),
    ("gfapi", "a GlusterFS volume"),
    ("gfapi_async", "a GlusterFS volume"),
    ("libhdfs", "an HDFS cluster"),
    ("filecreate", "file-system metadata operations"),
    ("filestat", "file-system metadata operations"),
    ("filedelete", "file-system metadata operations"),
    ("dircreate", "file-system metadata operations"),
    ("dirstat", "file-system metadata operations"),
    ("dirdelete", "file-system metadata operations"),
    ("cpuio", "CPU load, no I/O"),
    ("e4defrag", "ext4 defragmentation"),
    ("falloc", "file allocation calls"),
    ("ftruncate", "file truncation calls"),
    ("exec", "running a program"),
    ("mtd", "raw MTD flash (erase blocks managed by the host)"),
    ("dev-dax", "persistent memory"),
    ("libpmem", "persistent memory"),
    ("pmemblk", "persistent memory"),
    ("page_fault", "memory page faults, no block I/O"),
    (
        "null",
        "no I/O (fio's null engine completes each request at once, moving no data and touching no file)",
    ),
];

/// `Ok` for an engine that issues block I/O; otherwise why not.
pub fn check_engine(engine: &str) -> Result<(), String> {
    let name = engine.split(':').next().unwrap_or(engine).trim();
    if ENGINES.contains(&name) {
        return Ok(());
    }
    let why = REFUSED_ENGINES
        .iter()
        .find(|(e, _)| *e == name)
        .map_or_else(
            || "is not an engine iosteer knows".to_string(),
            |(_, why)| format!("does {why}, which iosteer cannot model"),
        );
    Err(format!(
        "ioengine `{name}` {why}; engines that issue block I/O are modelled: {}",
        ENGINES.join(", ")
    ))
}

/// The option iosteer reads that `key` is most likely a misspelling of
/// (`threads` for `thread`, `direcotry` for `directory`): one insertion,
/// deletion, substitution or swap of neighbours away.
pub fn near_miss(key: &str) -> Option<&'static str> {
    SUPPORTED
        .iter()
        .chain(REPLAY)
        .chain(TRACE)
        .chain(IGNORED)
        .copied()
        .filter(|known| known.len() > 3)
        .find(|known| strsim::osa_distance(key, known) <= 1)
}
