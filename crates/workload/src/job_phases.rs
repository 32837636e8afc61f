//! Phases that follow a job file's jobs, as fio reports them: a phase lasts
//! while the same jobs run, is named after them (`write`, `readers+fill`;
//! a name seen before gets `.2`, `.3`, ...), opens when they start (after
//! their `ramp_time`) and closes when the last of them ends (its last
//! request completed). So a phase's MB/s and IOPS are over the time its
//! jobs issued, as fio divides by a job's runtime, and stonewall groups,
//! `startdelay` and `runtime` each give their own phase. The first phase,
//! `job`, spans the whole workload, from the first job's start to the last
//! one's end.

use std::borrow::Borrow;
use std::collections::HashMap;

use iosteer_sched::Nanos;

use crate::report::{Phase, Recorder};
use crate::workload::Generator;

/// Before a phase's edge is known it lies past any time.
pub const UNKNOWN: Nanos = Nanos(u64::MAX);

/// Opens and closes phases as the jobs run.
#[derive(Debug, Default)]
pub struct PhaseTracker {
    /// The jobs measured now (their sections, in job order) and the index
    /// of their phase.
    current: Option<(Vec<String>, usize)>,
    /// Times each name was used, for `.2` suffixes.
    names: HashMap<String, u32>,
    /// The `job` phase (index 0) has opened / closed.
    opened: bool,
    closed: bool,
}

/// The `job` phase, whose edges the tracker sets.
pub fn whole_workload() -> Phase {
    Phase {
        name: "job".into(),
        start: UNKNOWN,
        end: UNKNOWN,
    }
}

impl PhaseTracker {
    /// Looks at the jobs at `now` (after a step) and moves the phases.
    pub fn update<G: Borrow<Generator>>(
        &mut self,
        now: Nanos,
        jobs: &[G],
        recorder: &mut Recorder,
    ) {
        let running = measured(now, jobs);
        if !self.opened && !running.is_empty() {
            self.opened = true;
            recorder.overlaps(0);
            recorder.set_phase_edges(0, now, UNKNOWN);
        }
        if self.opened && !self.closed && jobs.iter().all(|j| j.borrow().ended(now)) {
            self.closed = true;
            let start = recorder.phases()[0].start;
            recorder.set_phase_edges(0, start, now);
        }
        if self.current.as_ref().map(|c| &c.0) == Some(&running) {
            return;
        }
        if let Some((_, index)) = self.current.take() {
            let start = recorder.phases()[index].start;
            recorder.set_phase_edges(index, start, now);
        }
        if !running.is_empty() {
            let name = self.unique(running.join("+"));
            let index = recorder.add_phase(Phase {
                name,
                start: now,
                end: UNKNOWN,
            });
            self.current = Some((running, index));
        }
    }

    fn unique(&mut self, name: String) -> String {
        let seen = self.names.entry(name.clone()).or_insert(0);
        *seen += 1;
        if *seen == 1 {
            name
        } else {
            format!("{name}.{seen}")
        }
    }
}

/// Sections of the jobs that have started, are past their ramp and have not
/// ended, in job order, each once.
fn measured<G: Borrow<Generator>>(now: Nanos, jobs: &[G]) -> Vec<String> {
    let mut sections: Vec<String> = Vec::new();
    for generator in jobs {
        let generator = generator.borrow();
        let job = generator.job();
        let started = generator.waits_for().is_empty() && now >= job.start + job.shape.ramp;
        if !started || generator.ended(now) {
            continue;
        }
        let section = if job.shape.section.is_empty() {
            &job.name
        } else {
            &job.shape.section
        };
        if !sections.contains(section) {
            sections.push(section.clone());
        }
    }
    sections
}

/// Closes what is still open at `now` (a run cut short): a phase never
/// opened is empty at `now`.
pub fn settle(now: Nanos, recorder: &mut Recorder) {
    for index in 0..recorder.phases().len() {
        let phase = &recorder.phases()[index];
        let start = phase.start.min(now);
        let end = phase.end.min(now).max(start);
        recorder.set_phase_edges(index, start, end);
    }
}
