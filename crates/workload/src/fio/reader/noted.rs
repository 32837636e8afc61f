//! Options read only to say what iosteer does not do of them: commands it
//! does not run, logs it does not write, files it does not delete, engine
//! flags that change nothing on block I/O. Each is taken with a note, or
//! refused where fio's meaning would change the I/O.

use super::*;

/// Reads `setting` if it is such an option (`Ok(false)` if not).
pub(super) fn option(
    job: &str,
    setting: &Setting,
    notes: &mut Vec<String>,
) -> Result<bool, String> {
    let Setting {
        key, given, value, ..
    } = *setting;
    let bad = |expected: &str| setting.bad(expected);
    match key {
        "exitall" => notes.push(format!(
            "job {job}: `{given}` is accepted, but the other jobs run to their own end here"
        )),
        "filename_format" if value != "$jobname.$jobnum.$filenum" => notes.push(format!(
            "job {job}: filename_format={value} is not followed: a job without filename= has files of its own, named header.copy.file (fio's default), so jobs the format would put on one file get one each"
        )),
        "filename_format" => {}
        "exec_prerun" | "exec_postrun" => notes.push(format!(
            "job {job}: {given}={value} is not run: iosteer runs no commands of a job file"
        )),
        "nowait" => {
            // RWF_NOWAIT (libaio, io_uring, pvsync2): a request that
            // would block fails with EAGAIN instead of waiting.
            if boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))? {
                return Err(bad(
                    "0 (fio's default): with nowait=1 a request that would block fails, which iosteer does not model",
                ));
            }
        }
        "pre_read" => {
            if boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))? {
                notes.push(format!(
                    "job {job}: pre_read (reading the files into the page cache before the job, I/O fio does not count) is not done"
                ));
            }
        }
        "write_barrier" => {
            let every: u32 = value.parse().map_err(|_| bad("a count of writes (0: none)"))?;
            if every > 0 {
                notes.push(format!(
                    "job {job}: write_barrier={every}: fio 3.33 marks barrier writes only for its libpmem engine (persistent memory); with an engine of block I/O its writes are plain, as here"
                ));
            }
        }
        "sync_file_range" => {
            let every = sync_file_range(value).ok_or_else(|| {
                bad("wait_before, write or wait_after (one or more, joined by `,`), then a colon and a count of writes if not 1, such as write:8")
            })?;
            if every > 0 {
                notes.push(format!(
                "job {job}: sync_file_range={value}: fio calls sync_file_range(2) after every {every} writes; it starts or waits for the page cache's writeback and does not flush the drive's cache, so with writes modelled as they reach the drive it sends the drive nothing: not issued here"
                ));
            }
        }
        // fio 3.33 takes numruns (its tiobench profile's option) in a
        // job file, and runs the job once: one set of figures.
        "numruns" => {
            value.parse::<i64>().map_err(|_| bad("an integer"))?;
            notes.push(format!(
                "job {job}: numruns={value} runs the job once, as fio 3.33 does: it reads numruns only for its tiobench profile (--profile=tiobench), and its report holds one run"
            ));
        }
        "unlink" | "unlink_each_loop" => {
            if boolean(value).ok_or_else(|| bad("nothing, 0 or 1"))? {
                let when = if key == "unlink" {
                    "when the job ends"
                } else {
                    "after each loop"
                };
                notes.push(format!(
                    "job {job}: {given}: fio deletes the job's files {when}; iosteer run leaves them in place"
                ));
            }
        }
        "ioscheduler" => notes.push(format!(
            "job {job}: ioscheduler={value} is not applied: fio switches the device's kernel I/O scheduler; \
             iosteer schedules with its own (--sched), whatever the device's is"
        )),
        "write_iolog" | "write_lat_log" | "write_bw_log" | "write_iops_log"
        | "write_hist_log" => notes.push(format!(
            "job {job}: {given}={value} is not written: iosteer writes none of fio's logs; \
             its report (--json) and --out DIR (a CSV per second) hold what it measured"
        )),
        _ => return Ok(false),
    }
    Ok(true)
}

/// fio's `sync_file_range=FLAGS[:N]`: the count of writes between calls
/// (1 unless given, 0 for none), when FLAGS are `wait_before`, `write` or
/// `wait_after` joined by `,`.
fn sync_file_range(value: &str) -> Option<u32> {
    let (flags, every) = value.split_once(':').unwrap_or((value, "1"));
    let known = |f: &str| matches!(f.trim(), "wait_before" | "write" | "wait_after");
    (!flags.trim().is_empty() && flags.split(',').all(known)).then_some(())?;
    every.trim().parse().ok()
}
