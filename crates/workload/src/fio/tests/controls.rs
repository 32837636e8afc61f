//! The latency target, I/O priorities and deprecated options, as fio reads
//! them ([`crate::fio::controls`]).

use super::*;
use crate::depth_search::LatencyTarget;

#[test]
fn latency_options_take_fios_units_and_defaults() {
    // examples/latency-profile.fio: microseconds unless suffixed.
    let text = "[d]\nrw=randread\niodepth=128\nlatency_target=500000\nlatency_window=5000\nlatency_percentile=99.9\n";
    let target = jobs_of(text)[0].shape.latency_target.clone();
    assert_eq!(
        target,
        Some(LatencyTarget {
            target: Nanos::from_millis(500),
            window: Nanos::from_millis(5),
            percentile: 99.9,
            keep_adjusting: false,
        })
    );
    // fio's default percentile is 100; latency_run=1 keeps adjusting.
    let target = jobs_of("[d]\nlatency_target=2ms\nlatency_run=1\n")[0]
        .shape
        .latency_target
        .clone()
        .unwrap();
    assert_eq!((target.percentile, target.keep_adjusting), (100.0, true));
    // Without a target (or a 0 one) the window and percentile do nothing.
    assert_eq!(
        jobs_of("[d]\nlatency_window=1s\n")[0].shape.latency_target,
        None
    );
    assert_eq!(
        jobs_of("[d]\nlatency_target=0\n")[0].shape.latency_target,
        None
    );
}

#[test]
fn bad_latency_values_name_the_line_and_what_is_accepted() {
    assert_refused(
        "[d]\nlatency_target=1ms\nlatency_percentile=101\n",
        "t.fio:3:",
        &["latency_percentile=101", "0 to 100"],
    );
    assert_refused("[d]\nlatency_target=soon\n", "t.fio:2:", &["a time"]);
    assert_refused("[d]\nlatency_run=maybe\n", "t.fio:2:", &["0 or 1"]);
}

#[test]
fn io_priorities_are_checked_as_fio_checks_them_and_noted_as_not_modelled() {
    // examples/cmdprio-percentage.fio and cmdprio-bssplit.fio.
    let file = file_of(
        "[r]\nrw=randread\nioengine=libaio\ncmdprio_percentage=20\ncmdprio_class=1\n\
         [s]\nioengine=io_uring\nbssplit=64k/40:1024k/60,1024k/100\n\
         cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0\n",
    );
    assert_eq!(file.jobs.len(), 2);
    let priority: Vec<&String> = file
        .notes
        .iter()
        .filter(|n| n.contains("not modelled"))
        .collect();
    assert_eq!(priority.len(), 2, "{:?}", file.notes);
    assert!(priority[0].starts_with("job r: cmdprio_percentage, cmdprio_class: I/O priorities"));
    assert!(priority[1].starts_with("job s: cmdprio_bssplit: "));
    // fio's ranges: class 1-3, level 0-7, percentage 0-100.
    let refused = |option: &str, says: &[&str]| {
        let text = format!("[r]\nioengine=libaio\n{option}\n");
        assert_refused(&text, "t.fio:3:", says);
    };
    refused("cmdprio_class=4", &["cmdprio_class=4", "1-3"]);
    refused("cmdprio=8", &["cmdprio=8", "0-7"]);
    refused(
        "cmdprio_percentage=101",
        &["cmdprio_percentage=101", "0-100"],
    );
    refused(
        "cmdprio_bssplit=64k/25/1",
        &["cmdprio_bssplit", "size/percent/class/level"],
    );
    // Engine options of libaio and io_uring only (fio: "Bad option").
    assert_refused(
        "[r]\ncmdprio_percentage=20\nioengine=psync\n",
        "t.fio:2:",
        &["cmdprio_percentage", "libaio, io_uring", "psync"],
    );
    assert_refused(
        "[r]\nioengine=libaio\ncmdprio_bssplit=64k/25\ncmdprio_percentage=10\n",
        "t.fio:3:",
        &["cmdprio_percentage and cmdprio_bssplit"],
    );
}

#[test]
fn deprecated_options_are_refused_as_fio_refuses_them() {
    // fio 3.33: "Option rwmixcycle is deprecated" and the job is dropped
    // (examples/fsx.fio).
    assert_refused(
        "[f]\nrw=randrw\nrwmixcycle=40\n",
        "t.fio:3:",
        &["rwmixcycle", "deprecated", "fio", "refuses"],
    );
}

#[test]
fn flow_options_are_read_as_fio_reads_them() {
    use crate::flow::FlowWeight;
    // examples/flow.fio: flow_sleep in microseconds, flow_id 0 by default.
    let jobs =
        jobs_of("[global]\nflow_sleep=1000\n[a]\nrw=write\nflow=1\n[b]\nflow=8\nflow_id=3\n");
    let flows: Vec<_> = jobs.iter().map(|j| j.shape.flow.clone()).collect();
    let sleep = Nanos::from_millis(1);
    assert_eq!(
        flows,
        [
            Some(FlowWeight {
                id: 0,
                weight: 1,
                sleep
            }),
            Some(FlowWeight {
                id: 3,
                weight: 8,
                sleep
            })
        ]
    );
    assert_eq!(jobs_of("[a]\nflow=0\n")[0].shape.flow, None);
    assert_refused("[a]\nflow=1001\n", "t.fio:2:", &["flow=1001", "up to 1000"]);
    assert_refused("[a]\nflow_sleep=soon\n", "t.fio:2:", &["microseconds"]);
    assert_refused(
        "[a]\nflow_sleep=18446744073709551615\n",
        "t.fio:2:",
        &["below 2^32"],
    );
    // examples/butterfly.fio: fio 3.33 takes flow=-2 as 4294967294.
    let file = file_of("[a]\nflow=2\n[b]\nflow=-2\n");
    assert_eq!(
        file.jobs[1].shape.flow.as_ref().unwrap().weight,
        u32::MAX - 1
    );
    assert_noted(&file, "flow=-2: a negative weight");
}

#[test]
fn a_flow_job_waiting_for_its_own_flow_is_refused() {
    // fio 3.33 hangs on this file: `a` is held for `b`'s share, and `b`
    // waits for `a` to end.
    assert_refused(
        "[global]\nsize=1m\n[a]\nrw=read\nflow=1\n[b]\nstonewall\nrw=read\nflow=8\n",
        "t.fio:6:",
        &["job [b]", "job a", "flow_id=0", "neither ends"],
    );
    // Other flows, or no flow on either side, may wait.
    jobs_of(
        "[global]\nsize=1m\n[a]\nrw=read\nflow=1\n[b]\nstonewall\nrw=read\nflow=8\nflow_id=2\n",
    );
    jobs_of("[global]\nsize=1m\n[a]\nrw=read\n[b]\nstonewall\nrw=read\nflow=8\n");
}
