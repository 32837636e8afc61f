//! Options that steer a job rather than shape its requests: fio's latency
//! target (`latency_target`, `latency_window`, `latency_percentile`,
//! `latency_run`), flows (`flow`, `flow_id`, `flow_sleep`), and the I/O
//! priorities of the libaio and io_uring
//! engines (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`,
//! `cmdprio_bssplit`), which are checked as fio checks them and noted as
//! not modelled; steady state (`steadystate`, `steadystate_duration`,
//! `steadystate_ramp_time`, [`crate::steady_state`]) with the reporting
//! groups it is judged over (`group_reporting`, `new_group`); how full the
//! job keeps its queue (`iodepth_low`, `iodepth_batch_complete_min`); the
//! latency that ends a job (`max_latency`, not checked under `disable_lat`
//! or `gtod_reduce`, as in fio); the FUA options of the sg and
//! io_uring_cmd engines (`writefua` sends the writes FUA, `readfua` is
//! noted); and fio's deprecated options, refused as fio refuses them.

use super::*;
use crate::depth_search::LatencyTarget;
use crate::flow::FlowWeight;
use crate::job_shape::QueueDrain;
use crate::steady_state::{SteadyCriterion, SteadyState, CRITERIA};

/// Options fio 3.33 declares deprecated: it says "Option NAME is
/// deprecated" and drops the job.
pub(super) const DEPRECATED: &[&str] = &["rwmixcycle", "percentage_sequential"];

/// Engines whose options include the `cmdprio_*` ones.
const PRIORITY_ENGINES: &[&str] = &["libaio", "io_uring", "io_uring_cmd"];
/// Engines fio flags synchronous (`FIO_SYNCIO`): each request completes
/// before the next goes, so fio caps their `iodepth` at 1 (psync is its
/// default engine on Linux).
const SYNCHRONOUS_ENGINES: &[&str] = &[
    "sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "splice",
];

/// Engines whose options include `readfua` and `writefua`: sg, and the
/// passthrough io_uring_cmd of later fio (its `cmd_type=bsg` example).
const FUA_ENGINES: &[&str] = &["sg", "io_uring_cmd"];

/// What a section's steering options said.
#[derive(Default)]
pub(super) struct Controls {
    latency_target: Option<Nanos>,
    latency_window: Nanos,
    latency_percentile: Option<f64>,
    latency_run: bool,
    /// fio's `flow` weight (0: in no flow), `flow_id` and `flow_sleep`.
    flow: u32,
    flow_id: u32,
    flow_sleep: Nanos,
    negative_flow: bool,
    /// The `cmdprio_*` options given, with the line of the first.
    priorities: Vec<String>,
    priority_line: usize,
    /// `cmdprio_percentage` and `cmdprio_bssplit` given (fio: one or the other).
    priority_percentage: bool,
    priority_bssplit: bool,
    /// The job's `ioengine`, as written (fio's default: psync).
    pub(super) engine: Option<String>,
    /// fio's `steadystate` (its default when `None`), `steadystate_duration`
    /// and `steadystate_ramp_time`.
    steady: Option<SteadyCriterion>,
    steady_duration: Nanos,
    steady_ramp: Nanos,
    /// fio's `group_reporting` and `new_group`: the reporting groups a
    /// steady state is judged over. Otherwise they only shape fio's output.
    pub(super) group_reporting: bool,
    pub(super) new_group: bool,
    /// fio's `iodepth_low` (0 or none: the I/O depth) and
    /// `iodepth_batch_complete_min` (none: 1).
    iodepth_low: Option<u32>,
    complete_min: Option<u32>,
    /// fio's `max_latency` per direction, and whether latencies are
    /// measured at all (`disable_lat`, `gtod_reduce` turn them off).
    max_latency: [Option<Nanos>; 3],
    latency_off: [bool; 2],
    /// The FUA options given (`readfua`, `writefua`), with the
    /// line of the first, and their values.
    fua_options: Vec<String>,
    fua_line: usize,
    read_fua: bool,
    write_fua: bool,
    /// fio's `create_only`: the job lays out its files and does no I/O.
    create_only: bool,
}

impl Controls {
    /// Reads `key` if it is one of this file's options (`Ok(false)` if it
    /// is not); an error is the message.
    pub(super) fn option(&mut self, setting: &Setting) -> Result<bool, String> {
        let Setting {
            key, value, line, ..
        } = *setting;
        let bad = |expected: &str| setting.bad(expected);
        let time = |value: &str| {
            time_value(value, 1_000)
                .ok_or_else(|| bad("a time, microseconds unless suffixed (such as 500ms)"))
        };
        let seconds = |value: &str| {
            time_value(value, 1_000_000_000)
                .ok_or_else(|| bad("a time, seconds unless suffixed (such as 300 or 5m)"))
        };
        match key {
            "latency_target" => self.latency_target = Some(time(value)?),
            "latency_window" => self.latency_window = time(value)?,
            "latency_percentile" => {
                let p = value
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))
                    .ok_or_else(|| bad("a percentage from 0 to 100, such as 99.9"))?;
                self.latency_percentile = Some(p);
            }
            "latency_run" => self.latency_run = boolean(value).ok_or_else(|| bad("0 or 1"))?,
            "flow" => {
                let weight: i32 = value
                    .parse()
                    .ok()
                    .filter(|w| *w <= 1000)
                    .ok_or_else(|| bad("a weight up to 1000 (0: in no flow)"))?;
                // fio 3.33 takes a negative weight (without a word) as the
                // unsigned number of the same bits.
                self.flow = weight as u32;
                self.negative_flow = weight < 0;
            }
            "flow_id" => {
                self.flow_id = value.parse().map_err(|_| bad("a flow number, 0 or more"))?
            }
            "flow_sleep" => {
                // fio keeps it in 32 bits and refuses more.
                let us: u32 = value
                    .parse()
                    .map_err(|_| bad("microseconds, a whole number below 2^32"))?;
                self.flow_sleep = Nanos::from_micros(u64::from(us));
            }
            "steadystate" => {
                self.steady = Some(
                    SteadyCriterion::parse(value, setting.kb_base).map_err(|_| bad(CRITERIA))?,
                )
            }
            "steadystate_duration" => self.steady_duration = seconds(value)?,
            "steadystate_ramp_time" => self.steady_ramp = seconds(value)?,
            "group_reporting" => {
                self.group_reporting = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?
            }
            "new_group" => self.new_group = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?,
            "max_latency" => {
                let limits = per_direction(value, |t| time_value(t, 1_000))
                    .ok_or_else(|| bad("a time, microseconds unless suffixed (such as 10ms), or read,write,trim times"))?;
                set_directions(
                    &mut self.max_latency,
                    limits.map(|limit| limit.map(|l| (l > Nanos::ZERO).then_some(l))),
                );
            }
            // Reporting options, but fio checks max_latency only with them off.
            "disable_lat" | "gtod_reduce" => {
                self.latency_off[usize::from(key == "gtod_reduce")] =
                    boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?
            }
            "create_only" => {
                self.create_only = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?
            }
            "readfua" | "writefua" => {
                let on = boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))?;
                *(if key == "readfua" {
                    &mut self.read_fua
                } else {
                    &mut self.write_fua
                }) = on;
                if self.fua_options.is_empty() {
                    self.fua_line = line;
                }
                if !self.fua_options.iter().any(|o| o == key) {
                    self.fua_options.push(key.to_string());
                }
            }
            "iodepth_low" => {
                self.iodepth_low = Some(value.parse().map_err(|_| bad("a depth, 0 or more"))?)
            }
            "iodepth_batch_complete_min" => {
                self.complete_min = Some(value.parse().map_err(|_| bad("a count, 0 or more"))?)
            }
            "cmdprio_percentage" | "cmdprio_class" | "cmdprio" | "cmdprio_bssplit" => self
                .priority_option(key, value, line)
                .map_err(|e| bad(&e))?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `cmdprio_*`: values as fio checks them (the message is what is
    /// expected).
    fn priority_option(&mut self, key: &str, value: &str, line: usize) -> Result<(), String> {
        let (accepted, range) = match key {
            "cmdprio_percentage" => (
                "a percentage 0-100, or one for reads and one for writes",
                0..=100,
            ),
            "cmdprio_class" => (
                "a priority class 1-3 (1 real-time, 2 best-effort, 3 idle), or one per direction",
                1..=3,
            ),
            "cmdprio" => (
                "a priority level 0-7 (0 the highest), or one per direction",
                0..=7,
            ),
            _ => ("", 0..=0), // cmdprio_bssplit, read below
        };
        if key == "cmdprio_bssplit" {
            priority_bssplit(value)?;
            self.priority_bssplit = true;
        } else {
            let fits = |t: &str| t.trim().parse::<u32>().is_ok_and(|n| range.contains(&n));
            if value.is_empty() || !value.split(',').all(fits) {
                return Err(accepted.into());
            }
            self.priority_percentage |= key == "cmdprio_percentage";
        }
        if self.priorities.is_empty() {
            self.priority_line = line;
        }
        if !self.priorities.iter().any(|p| p == key) {
            self.priorities.push(key.to_string());
        }
        Ok(())
    }

    /// The section is read: the latency target onto `shape`, the
    /// priorities checked against the engine and noted. An error is the
    /// line it is about and the message.
    pub(super) fn finish(
        self,
        job: &str,
        iodepth: u32,
        shape: &mut JobShape,
        notes: &mut Vec<String>,
    ) -> Result<(), (usize, String)> {
        shape.queue_drain = self.queue_drain(job, iodepth, notes);
        shape.max_latency = self.max_latency;
        if self.latency_off.contains(&true) && self.max_latency.iter().any(Option::is_some) {
            shape.max_latency = [None; 3];
            notes.push(format!(
                "job {job}: max_latency is not checked, as in fio: disable_lat or gtod_reduce turns latency measurement off"
            ));
        }
        shape.latency_target = self
            .latency_target
            .filter(|t| *t > Nanos::ZERO)
            .map(|target| LatencyTarget {
                target,
                window: self.latency_window,
                percentile: self.latency_percentile.unwrap_or(100.0),
                keep_adjusting: self.latency_run,
            });
        if self.negative_flow {
            notes.push(format!(
                "job {job}: flow={}: a negative weight (the sign of fio's older flow counter) is taken as fio 3.33 takes it, as the unsigned {} (its weights add up in 32 bits, and a flow whose weights come to 0 holds no job back)",
                self.flow as i32, self.flow
            ));
        }
        // fio keeps the duration in whole seconds; 0 turns the check off.
        let seconds = self.steady_duration.0 / 1_000_000_000;
        shape.steady_state = (seconds > 0).then(|| SteadyState {
            criterion: self.steady.unwrap_or_default(),
            seconds: u32::try_from(seconds).unwrap_or(u32::MAX),
            ramp: self.steady_ramp,
            group: None,
        });
        shape.flow = (self.flow != 0).then_some(FlowWeight {
            id: self.flow_id,
            weight: self.flow,
            sleep: self.flow_sleep,
        });
        self.finish_fua(job, shape, notes)?;
        if self.create_only {
            (shape.create_only, shape.end_flush) = (true, false);
            notes.push(format!(
                "job {job}: create_only: fio only lays out the job's files and issues none of its I/O, and so here (iosteer run lays them out; the simulator has nothing to do)"
            ));
        }
        if self.priorities.is_empty() {
            return Ok(());
        }
        let engine = self.engine_name();
        let given = self.priorities.join(", ");
        if !PRIORITY_ENGINES.contains(&engine) {
            return Err((
                self.priority_line,
                format!(
                    "job [{job}]: {given}: options of the {} engines, and the job's engine is {engine} (fio: \"Bad option\")",
                    PRIORITY_ENGINES.join(", ")
                ),
            ));
        }
        if self.priority_percentage && self.priority_bssplit {
            return Err((
                self.priority_line,
                format!("job [{job}]: cmdprio_percentage and cmdprio_bssplit go one without the other, as in fio"),
            ));
        }
        notes.push(format!(
            "job {job}: {given}: I/O priorities are not modelled (iosteer's drives and schedulers serve every request alike), so the job runs as without them"
        ));
        Ok(())
    }
}

impl Controls {
    /// fio's cap on a synchronous engine's queue: `iodepth` at most 1, with
    /// a note when the job asked for more (fio 3.33 prints one only for an
    /// engine named in the job; it caps its default, psync, all the same).
    pub(super) fn cap_iodepth(&self, job: &str, iodepth: &mut u32, notes: &mut Vec<String>) {
        let engine = self.engine_name();
        if *iodepth <= 1 || !SYNCHRONOUS_ENGINES.contains(&engine) {
            return;
        }
        let named = match self.engine {
            Some(_) => format!("ioengine={engine}"),
            None => format!("the job names no ioengine, and fio's default, {engine},"),
        };
        notes.push(format!(
            "job {job}: iodepth={iodepth}: {named} is synchronous, so fio caps the queue at 1 request and so does iosteer (ioengine=libaio or io_uring keeps {iodepth} out)",
            iodepth = *iodepth
        ));
        *iodepth = 1;
    }

    /// The job's engine, without its options (fio's default: psync).
    fn engine_name(&self) -> &str {
        let engine = self.engine.as_deref().unwrap_or("psync");
        engine.split(':').next().unwrap_or(engine).trim()
    }

    /// The FUA options of the sg and io_uring_cmd engines: refused with
    /// another engine, as fio refuses them; `writefua` sends the writes
    /// FUA, `readfua` is noted.
    fn finish_fua(
        &self,
        job: &str,
        shape: &mut JobShape,
        notes: &mut Vec<String>,
    ) -> Result<(), (usize, String)> {
        if self.fua_options.is_empty() {
            return Ok(());
        }
        let (engine, given) = (self.engine_name(), self.fua_options.join(", "));
        if !FUA_ENGINES.contains(&engine) {
            let engines = FUA_ENGINES.join(", ");
            return Err((
                self.fua_line,
                format!("job [{job}]: {given}: options of the {engines} engines, and the job's engine is {engine} (fio: \"Bad option\")"),
            ));
        }
        shape.write_fua = self.write_fua;
        if self.read_fua {
            notes.push(format!(
                "job {job}: readfua: its reads carry FUA; the drive model has no read cache, so a read comes from the NAND as FUA asks (but for units still in its write cache, served from there)"
            ));
        }
        Ok(())
    }

    /// How a full queue drains ([`QueueDrain`]); `None` when the job
    /// refills as each request completes (fio's defaults).
    fn queue_drain(&self, job: &str, iodepth: u32, notes: &mut Vec<String>) -> Option<QueueDrain> {
        if self.complete_min == Some(0) {
            notes.push(format!(
                "job {job}: iodepth_batch_complete_min=0: fio then polls for completions rather than waits, \
                 and how full it keeps the queue depends on its timing (fio 3.33 on a disk: depth 1, or 0 to \
                 {iodepth} with iodepth_batch_complete_max={iodepth}); here the job refills as each request completes"
            ));
        }
        // fio reads an iodepth_low of 0 as the I/O depth itself.
        let low = self.iodepth_low.filter(|&low| low > 0).unwrap_or(iodepth);
        let batch = self.complete_min.unwrap_or(1).max(1);
        (low < iodepth || batch > 1).then_some(QueueDrain { low, batch })
    }
}

/// fio's `cmdprio_bssplit`: per direction (`,`), entries (`:`) of
/// `size/percent` or `size/percent/class/level`; the message says what is
/// expected.
fn priority_bssplit(value: &str) -> Result<(), String> {
    const EXPECTED: &str = "entries size/percent or size/percent/class/level separated by `:`, one list per direction separated by `,` (such as 64k/25/1/1:64k/75/3/2,1024k/0)";
    let entry_fits = |entry: &str| {
        let fields: Vec<&str> = entry.split('/').map(str::trim).collect();
        let numbers = |fields: &[&str]| fields.iter().all(|f| f.parse::<u32>().is_ok());
        matches!(fields.len(), 2 | 4) && size_value(fields[0]).is_some() && numbers(&fields[1..])
    };
    let fits = value
        .split(',')
        .filter(|list| !list.trim().is_empty())
        .flat_map(|list| list.split(':'))
        .all(entry_fits);
    if value.trim().is_empty() || !fits {
        return Err(EXPECTED.into());
    }
    Ok(())
}
