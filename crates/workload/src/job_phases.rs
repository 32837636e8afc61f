//! Phases that follow a job file's jobs, as fio reports them: a phase lasts
//! while the same jobs run, is named after them (`write`, `readers+fill`;
//! a name seen before gets `.2`, `.3`, ...), opens when they start (after
//! their `ramp_time`) and closes when the last of them ends (its last
//! request completed; jobs of a phase that only drain after the others
//! ended stay in it). So a phase's MB/s and IOPS are over the time its
//! jobs issued, as fio divides by a job's runtime, and stonewall groups,
//! `startdelay` and `runtime` each give their own phase. The first phase,
//! `job`, spans the whole workload, from the first job's start to the last
//! one's end (a job named `job` or `all` measures in `job.2` or `all.2`,
//! the report's own phases keeping their names).

use std::borrow::Borrow;
use std::collections::HashMap;

use iosteer_sched::Nanos;

use crate::report::{Phase, Recorder};
use crate::workload::Generator;

/// Phase names the report gives its own phases (the whole workload, and
/// the run's figures in all).
const RESERVED: [&str; 2] = ["job", "all"];

/// Before a phase's edge is known it lies past any time.
pub const UNKNOWN: Nanos = Nanos(u64::MAX);

/// A section, and the jobs its jobs waited for (see [`group_of`]).
type Group = (String, Vec<usize>);

/// Opens and closes phases as the jobs run.
#[derive(Debug, Default)]
pub struct PhaseTracker {
    /// The jobs measured now (their sections and the jobs each waited for,
    /// in job order) and the index of their phase: two stonewall groups of
    /// one section name (a job file's copy-paste slip) stay two phases.
    current: Option<(Vec<Group>, usize)>,
    /// Times each name was used, for `.2` suffixes.
    names: HashMap<String, u32>,
    /// The `job` phase (index 0) has opened / closed.
    opened: bool,
    closed: bool,
    /// Whether each job was measured at the last look: while none changes,
    /// the phases do not either.
    measuring: Vec<bool>,
    /// The jobs measured, one per section (reused: no allocation per step).
    running: Vec<usize>,
    /// Whether each job was ever measured.
    ever_measured: Vec<bool>,
    /// Whether each job's figures were cleared as fio clears them
    /// ([`Generator::figures_cleared_at`]), and the jobs whose could not be
    /// (other jobs ran in the same phases).
    cleared: Vec<bool>,
    not_cleared: Vec<usize>,
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
    /// Looks at the jobs at `now` (after a step), moves the phases and
    /// clears what fio clears.
    pub fn update<G: Borrow<Generator>>(
        &mut self,
        now: Nanos,
        jobs: &[G],
        recorder: &mut Recorder,
    ) {
        self.move_phases(now, jobs, recorder);
        self.clear_figures(now, jobs, recorder);
    }

    /// A job that ran alone so far and whose figures fio clears now (its
    /// latency target's final window started): the phases holding it start
    /// again then, cleared.
    fn clear_figures<G: Borrow<Generator>>(
        &mut self,
        now: Nanos,
        jobs: &[G],
        recorder: &mut Recorder,
    ) {
        self.cleared.resize(jobs.len(), false);
        for (index, generator) in jobs.iter().enumerate() {
            let Some(at) = generator.borrow().figures_cleared_at() else {
                continue;
            };
            if self.cleared[index] || at > now {
                continue;
            }
            self.cleared[index] = true;
            let others = self.ever_measured.iter().enumerate();
            if others
                .filter(|(other, _)| *other != index)
                .any(|(_, &ever)| ever)
            {
                self.not_cleared.push(index);
                continue;
            }
            recorder.restart_phase(0, at);
            if let Some((_, current)) = &self.current {
                recorder.restart_phase(*current, at);
            }
        }
    }

    fn move_phases<G: Borrow<Generator>>(
        &mut self,
        now: Nanos,
        jobs: &[G],
        recorder: &mut Recorder,
    ) {
        let changed = self.look(now, jobs);
        if self.opened && !self.closed && jobs.iter().all(|j| j.borrow().ended(now)) {
            self.closed = true;
            let start = recorder.phases()[0].start;
            recorder.set_phase_edges(0, start, now);
        }
        if !changed {
            return;
        }
        measured(jobs, &self.measuring, &mut self.running);
        let running = &self.running;
        if !self.opened && !running.is_empty() {
            self.opened = true;
            recorder.overlaps(0);
            recorder.set_phase_edges(0, now, UNKNOWN);
        }
        let unchanged = self.current.as_ref().is_some_and(|(sections, _)| {
            sections.len() == running.len()
                && (running.iter().zip(sections)).all(|(&job, (section, after))| {
                    group_of(jobs[job].borrow()) == (section, after)
                })
        });
        if unchanged || (self.current.is_none() && running.is_empty()) {
            return;
        }
        // Jobs that only drain (done issuing, requests still out) after the
        // others of their phase ended are the tail of that phase, not a
        // phase of their own: fio counts a job's drain in its own runtime.
        let draining_tail = self.current.as_ref().is_some_and(|(sections, _)| {
            !running.is_empty()
                && running.iter().all(|&job| {
                    let generator = jobs[job].borrow();
                    let past_stop = generator.job().stop.is_some_and(|stop| now >= stop);
                    (generator.done_issuing() || past_stop)
                        && sections
                            .iter()
                            .any(|(s, after)| (s.as_str(), after) == group_of(generator))
                })
        });
        if draining_tail {
            return;
        }
        if let Some((_, index)) = self.current.take() {
            let start = recorder.phases()[index].start;
            recorder.set_phase_edges(index, start, now);
        }
        if !running.is_empty() {
            let running: Vec<Group> = running
                .iter()
                .map(|&job| group_of(jobs[job].borrow()))
                .map(|(section, after)| (section.to_string(), after.clone()))
                .collect();
            let sections: Vec<&str> = running.iter().map(|(s, _)| s.as_str()).collect();
            let name = self.unique(sections.join("+"));
            let index = recorder.add_phase(Phase {
                name,
                start: now,
                end: UNKNOWN,
            });
            self.current = Some((running, index));
        }
    }

    fn unique(&mut self, name: String) -> String {
        // The report's own phases, `job` and `all`, are taken: a job of
        // that name measures in `all.2` (two phases named `all` would leave
        // `--phase all` and a reader of the JSON to guess).
        let taken = u32::from(RESERVED.contains(&name.as_str()));
        let seen = self.names.entry(name.clone()).or_insert(taken);
        *seen += 1;
        if *seen == 1 {
            name
        } else {
            format!("{name}.{seen}")
        }
    }
}

/// A job's section and the jobs it waited for (its stonewall group's
/// place): what a phase is of.
fn group_of(generator: &Generator) -> (&str, &Vec<usize>) {
    (section_of(generator), &generator.job().shape.after)
}

/// The section a job's figures go to: its own name unless it shares one.
fn section_of(generator: &Generator) -> &str {
    let job = generator.job();
    if job.shape.section.is_empty() {
        &job.name
    } else {
        &job.shape.section
    }
}

impl PhaseTracker {
    /// Notes which jobs are measured at `now`: started, past their ramp and
    /// not ended. Returns whether that changed since the last look.
    fn look<G: Borrow<Generator>>(&mut self, now: Nanos, jobs: &[G]) -> bool {
        let mut changed = self.measuring.len() != jobs.len();
        self.measuring.resize(jobs.len(), false);
        for (generator, measuring) in jobs.iter().zip(&mut self.measuring) {
            let generator = generator.borrow();
            let started = generator.waits_for().is_empty() && !generator.in_ramp(now);
            let now_measured = started && !generator.ended(now);
            changed |= *measuring != now_measured;
            *measuring = now_measured;
        }
        if changed {
            self.ever_measured.resize(jobs.len(), false);
            for (ever, &now) in self.ever_measured.iter_mut().zip(&self.measuring) {
                *ever |= now;
            }
        }
        changed
    }

    /// A note for each job with a `ramp_time` that issued requests and was
    /// never measured: it, or the run, ended within its ramp, so none of
    /// its requests are in the figures. fio differs there: it clears a
    /// job's figures when the ramp ends, so a job that ends first is
    /// reported whole; an empty table alone would not say either. And one
    /// for each job whose figures fio clears and these could not be.
    pub fn ramp_notes<G: Borrow<Generator>>(&self, jobs: &[G]) -> Vec<String> {
        let not_cleared = self.not_cleared.iter().map(|&index| {
            format!(
                "job {}: fio clears its figures when the final window of its latency target's search starts; other jobs ran in the same phases, so they are not cleared here and hold its search too",
                jobs[index].borrow().name()
            )
        });
        jobs.iter()
            .map(|g| g.borrow())
            .zip(self.ever_measured.iter().chain(std::iter::repeat(&false)))
            .filter(|(g, &ever)| !ever && g.job().shape.ramp > Nanos::ZERO && g.issued() > 0)
            .map(|(g, _)| {
                format!(
                    "job {}: it or the run ended within its ramp_time ({:.1} s), so none of its {} requests are in the figures (fio would count their I/Os and bytes, not their latencies: it clears a job's figures only when its ramp ends)",
                    g.name(),
                    g.job().shape.ramp.as_secs_f64(),
                    g.issued()
                )
            })
            .chain(not_cleared)
            .collect()
    }
}

/// Into `running`: the jobs `measuring` marks, in job order, the first of
/// each section only.
fn measured<G: Borrow<Generator>>(jobs: &[G], measuring: &[bool], running: &mut Vec<usize>) {
    running.clear();
    for (index, generator) in jobs.iter().enumerate() {
        if !measuring[index] {
            continue;
        }
        let section = section_of(generator.borrow());
        if !running
            .iter()
            .any(|&j| section_of(jobs[j].borrow()) == section)
        {
            running.push(index);
        }
    }
}

/// Closes what is still open at `now` (a run cut short, or over before its
/// phases' planned ends): a phase never opened is empty at `now`.
pub fn settle(now: Nanos, recorder: &mut Recorder) {
    for index in 0..recorder.phases().len() {
        let phase = &recorder.phases()[index];
        let start = phase.start.min(now);
        let end = phase.end.min(now).max(start);
        recorder.set_phase_edges(index, start, end);
    }
}
