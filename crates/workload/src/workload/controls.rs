//! What steers a job beyond its rate and depth: fio's latency target (the
//! depth the job searches, [`crate::depth_search`]), flows (jobs kept
//! in a ratio, [`crate::flow`]), a full queue that drains before it fills
//! again (fio's `iodepth_low`), steady state (jobs that stop once
//! steady, [`crate::steady_state`]), `max_latency` (a job that stops at
//! its first request slower than it) and the think time after completions,
//! and when the job's requests count in the figures.

use iosteer_sched::{Nanos, Op, Request};

use super::rates::direction_index;
use super::{Generator, Job, JobKind};
use crate::depth_search::{DepthSearch, Outcome};
use crate::flow::{self, SPIN};
use crate::steady_state::{SteadyMember, SteadyMetric};

impl Generator {
    /// The generators of a workload's `jobs` (job `i` the tenant `i`), those
    /// of one flow sharing it ([`join_flows`]).
    pub fn for_jobs(jobs: &[Job], seed: u64) -> Vec<Generator> {
        let mut generators: Vec<Generator> = (0..jobs.len())
            .map(|i| Generator::new(jobs[i].clone(), i as u32, seed))
            .collect();
        join_flows(&mut generators);
        join_steady_groups(&mut generators);
        generators
    }
}

/// Gives the jobs of one reporting group with a steady state judged over
/// the group (`group_reporting`) one shared judgement.
fn join_steady_groups(generators: &mut [Generator]) {
    let group_of = |g: &Generator| g.job.shape.steady_state.as_ref().and_then(|s| s.group);
    let mut groups: Vec<u32> = generators.iter().filter_map(group_of).collect();
    groups.sort_unstable();
    groups.dedup();
    for group in groups {
        let in_group: Vec<usize> = (0..generators.len())
            .filter(|&i| group_of(&generators[i]) == Some(group))
            .collect();
        let spec = generators[in_group[0]].job.shape.steady_state.clone();
        let members = SteadyMember::of_group(spec.expect("grouped"), in_group.len());
        for (i, member) in in_group.into_iter().zip(members) {
            generators[i].steady = Some(member);
            generators[i].steady_started();
        }
    }
}

/// Puts the generators of jobs with a `flow` in their flows (fio's
/// `flow_id`), each flow's weights counted from the start.
pub fn join_flows(generators: &mut [Generator]) {
    let weights: Vec<_> = generators
        .iter()
        .map(|g| g.job.shape.flow.clone())
        .collect();
    for (generator, member) in generators.iter_mut().zip(flow::members(&weights)) {
        generator.shaped.flow = member;
    }
}

/// The search a job with a latency target starts with, from its start.
pub(super) fn new_depth_search(job: &Job) -> Option<DepthSearch> {
    let JobKind::Synthetic(s) = &job.kind else {
        return None;
    };
    let target = job.shape.latency_target.clone()?;
    Some(DepthSearch::new(target, s.arrival.iodepth, job.start))
}

impl Generator {
    /// The most requests the job may have out: its `iodepth`, or the
    /// depth its latency target allows now.
    pub(super) fn depth_limit(&self, iodepth: u32) -> u32 {
        if self.shaped.flow_quiescing {
            return 0;
        }
        self.depth_search
            .as_ref()
            .map_or(iodepth, DepthSearch::limit)
    }

    /// fio's flow check before a request: `true` when the job is ahead of
    /// its weight's share and does not issue now; it looks again after
    /// its requests out complete and `flow_sleep`, or soon ([`SPIN`]).
    pub(super) fn held_by_flow(&mut self, now: Nanos) -> bool {
        let Some(member) = &mut self.shaped.flow else {
            return false;
        };
        if member.may_issue() {
            return false;
        }
        let sleep = member.weight.sleep;
        if sleep == Nanos::ZERO {
            self.retry_at = Some(now + SPIN);
        } else if self.outstanding > 0 {
            self.shaped.flow_quiescing = true;
        } else {
            self.retry_at = Some(now + sleep);
        }
        true
    }

    /// A request completed: a job held back by its flow waits `flow_sleep`
    /// once its last request out completed.
    pub(super) fn flow_completed(&mut self, now: Nanos) {
        let Some(member) = &self.shaped.flow else {
            return;
        };
        if self.shaped.flow_quiescing && self.outstanding == 0 {
            self.shaped.flow_quiescing = false;
            self.retry_at = Some(now + member.weight.sleep);
        }
    }

    /// The job started (now or at its start time): its completions count
    /// towards its steady state from the end of its `ramp_time` (fio does
    /// not sample a job in its ramp, and starts its clock anew after it).
    pub(super) fn steady_started(&mut self) {
        if let (Some(steady), false) = (&self.steady, self.waiting) {
            steady.started(self.job.start + self.job.shape.ramp);
        }
    }

    /// Whether steady state, found by `now`, stops the job. (Steady state
    /// is rare: its calls stay out of the hot loop, behind a check of
    /// `steady` at the call.)
    #[cold]
    #[inline(never)]
    pub(super) fn steady_stops(&mut self, now: Nanos) -> bool {
        self.steady_reached |= self.steady.as_ref().is_some_and(|s| s.stops(now));
        self.steady_reached
    }

    /// Tells the job's steady state that `request` completed at `now`.
    #[cold]
    #[inline(never)]
    pub(super) fn steady_completed(&mut self, request: &Request, now: Nanos) {
        if let (Some(steady), false) = (&self.steady, request.op == Op::Flush) {
            self.steady_reached |= steady.completed(request.len.0, now);
        }
    }

    /// A finished job is no longer sampled (fio samples running jobs).
    #[cold]
    #[inline(never)]
    pub(super) fn leave_steady_state_when_finished(&mut self) {
        if let (Some(steady), true) = (&self.steady, self.issuing_done && self.outstanding == 0) {
            steady.ended();
        }
    }

    /// A finished job leaves its flow (fio's jobs do when they exit).
    pub(super) fn leave_flow_when_finished(&mut self) {
        if self.issuing_done && self.outstanding == 0 {
            if let Some(member) = &mut self.shaped.flow {
                member.leave();
            }
        }
    }

    /// Tells the job's depth search that `request` completed at `now`.
    pub(super) fn search_depth(&mut self, request: &Request, now: Nanos) {
        let counts = !self.in_ramp(now);
        let outstanding = self.outstanding;
        if let (Some(search), false) = (&mut self.depth_search, request.op == Op::Flush) {
            let latency = now - request.submitted.min(now);
            search.completed(now, latency, outstanding, counts);
        }
    }

    /// When fio clears the job's figures, if it has: the start of its
    /// final window at the depth its latency target's search found (none
    /// with `latency_run=1`, which never stops searching).
    pub fn figures_cleared_at(&self) -> Option<Nanos> {
        let search = self.depth_search.as_ref()?;
        if search.target().keep_adjusting {
            return None;
        }
        search.final_window_since()
    }
}

impl Generator {
    /// What the job's depth search found, for the report's notes (fio
    /// prints it as its `latency : target=..., depth=N` line).
    fn depth_search_note(&self) -> Option<String> {
        let search = self.depth_search.as_ref()?;
        let t = search.target();
        let head = format!(
            "job {}: latency_target {} for {}% of requests over {} windows, iodepth {}",
            self.name(),
            millis(t.target),
            t.percentile,
            millis(t.window),
            self.iodepth(),
        );
        let (depths, changes) = search.depths_tried();
        let mut tried: Vec<String> = depths.iter().map(u32::to_string).collect();
        if changes + 1 > depths.len() {
            tried.push(format!("... ({} changes in all)", changes));
        }
        let tried = tried.join(", ");
        let depth = search.depth();
        let body = match search.outcome() {
            _ if t.keep_adjusting => format!(
                "latency_run=1: the depth followed the target for the whole run ({tried}), at {depth} when the job stopped; the figures are the whole run"
            ),
            Outcome::Found => format!(
                "depth {depth} found (depths tried: {tried}); fio clears the job's figures when its final window at that depth starts, and so does the report, and the job ended after that window, as fio's does"
            ),
            Outcome::FinalWindow => format!(
                "depth {depth} found (depths tried: {tried}); the job stopped (its runtime or size) during its final window at it, which the figures hold"
            ),
            Outcome::GaveUp { latency } => format!(
                "a request took {} at depth 1 with every request bound to the target (latency_percentile=100): fio ends the job there with an error (ETIMEDOUT, \"max latency exceeded\"), and the job stopped issuing after its {} requests",
                millis(*latency),
                self.issued()
            ),
            Outcome::Searching => format!(
                "the search had not settled when the job stopped (depths tried: {tried}; its runtime or size came first), so its figures are the whole job, as fio's are then"
            ),
        };
        Some(format!("{head}: {body}"))
    }

    /// Its I/O depth of requests out (or the depth its latency target
    /// allows now): a synthetic job or a paced trace.
    pub(super) fn at_depth(&self) -> bool {
        match &self.job.kind {
            JobKind::Synthetic(s) => self.outstanding >= self.depth_limit(s.arrival.iodepth),
            JobKind::Trace(_) => self.trace_full(),
        }
    }

    /// fio's `iodepth_low`: a queue that filled, at whatever depth, drains
    /// before the job issues again.
    pub(super) fn follow_queue_drain(&mut self) {
        let Some(drain) = self.job.shape.queue_drain else {
            return;
        };
        match self.shaped.draining {
            None if self.at_depth() => {
                self.shaped.draining = Some(drain.resume_at(self.outstanding));
            }
            Some(resume) if self.outstanding <= resume => self.shaped.draining = None,
            _ => {}
        }
    }

    /// fio's `max_latency`: the first request of a direction with one,
    /// completed after the job's ramp, that took longer stops the job (it
    /// issues no more; what it has out completes), as fio ends a job with
    /// ETIMEDOUT there.
    #[inline]
    pub(super) fn check_max_latency(&mut self, request: &Request, now: Nanos) {
        let Some(direction) = direction_index(request.op) else {
            return;
        };
        let Some(limit) = self.job.shape.max_latency[direction] else {
            return;
        };
        let latency = now - request.submitted.min(now);
        if latency > limit && self.shaped.too_slow.is_none() && !self.in_ramp(now) {
            self.shaped.too_slow = Some(TooSlow {
                at: now,
                op: request.op,
                latency,
                limit,
            });
        }
    }

    fn too_slow_note(&self) -> Option<String> {
        let t = self.shaped.too_slow?;
        Some(format!(
            "job {} stopped at {:.6} s: a {} took {} µs, over its max_latency of {} µs (fio ends the job there with error 110, ETIMEDOUT); the requests it had out completed",
            self.name(),
            t.at.as_secs_f64(),
            t.op.name(),
            t.latency.0 / 1_000,
            t.limit.0 / 1_000,
        ))
    }

    /// What the job's steady state came to (fio's `steadystate` section
    /// of its report), said once per group, by its first job.
    fn steady_state_note(&self) -> Option<String> {
        let steady = self.steady.as_ref().filter(|s| s.first())?;
        let watch = steady.watch();
        let spec = watch.spec();
        let (who, stopped) = match steady.members {
            1 => (format!("job {}", self.name()), "the job stopped"),
            n => (
                format!(
                    "job {} and the {} other job{} of its reporting group (group_reporting: judged on their sum)",
                    self.name(),
                    n - 1,
                    if n > 2 { "s" } else { "" }
                ),
                "the jobs stopped",
            ),
        };
        let head = format!(
            "{who}: steady state {} over {} s",
            spec.criterion, spec.seconds
        );
        let Some((judged, window)) = watch.last() else {
            return Some(format!(
                "{head}: never judged, as {} ran fewer than {} whole seconds past ramp_time, ss_ramp and 1 s (fio's too); {} to the end",
                if steady.members == 1 { "the job" } else { "the group's last job (fio judges a group on the ticks its last job runs)" },
                spec.seconds,
                stopped.replace("stopped", "ran")
            ));
        };
        let unit = match spec.criterion.metric {
            SteadyMetric::Iops => "I/Os per second",
            SteadyMetric::Bandwidth => "bytes per second",
        };
        let window: Vec<String> = window.iter().map(|v| v.to_string()).collect();
        let measure = if spec.criterion.slope {
            "slope"
        } else {
            "largest deviation from the mean"
        };
        let pct = if spec.criterion.percent { "%" } else { "" };
        let judged_text = format!(
            "its window ({} {unit}) had a {measure} of {:.3}{pct} against {}{pct}",
            window.join(", "),
            judged.value,
            spec.criterion.limit
        );
        let at = judged.at.0 as f64 / 1e9;
        Some(if judged.attained {
            format!("{head}: reached at {at} s of the run, where {judged_text}; {stopped} issuing there, as fio does (fio checks once a second from when its own clock started, not on the run's whole seconds, so its jobs stop up to a second sooner or later)")
        } else {
            let ran = stopped.replace("stopped", "ran");
            format!(
                "{head}: not reached; at the last check ({at} s) {judged_text}; {ran} to the end"
            )
        })
    }

    /// When the job, stopped by time (its own, or `run_end`, the run's when
    /// that comes first), had its last request complete long after its
    /// stop, queued in the scheduler or the drive: its phases last until
    /// then and their rates are over that time (a 251 MB/s reader read as
    /// 34.9 MB/s over a phase a held writer kept open 31 s). Long: a second,
    /// or a tenth of the job's run.
    pub fn held_past_stop_note(&self, run_end: Option<Nanos>) -> Option<String> {
        let ended = self.last_completion?;
        let stop = match (self.job.stop, run_end) {
            (Some(own), Some(run)) => own.min(run),
            (stop, run) => stop.or(run)?,
        };
        let start = self.job.start;
        let late = ended.0.checked_sub(stop.0)?;
        let run = stop.0.saturating_sub(start.0);
        (late >= Nanos::from_secs(1).0 || late * 10 >= run.max(1)).then(|| {
            format!(
                "job {} stopped at {:.3} s and its last request completed at {:.3} s (queued in the scheduler or the drive): the phases it is in last until then, and their rates are over that time",
                self.name(),
                stop.as_secs_f64(),
                ended.as_secs_f64()
            )
        })
    }

    /// fio's `rate_min` and `rate_iops_min`: a note for each direction the
    /// job issued in below its floor, over its run from its start to `end`
    /// (fio judges each `rate_cycle`, a second by default, and stops the
    /// job at the first one below).
    pub fn rate_floor_notes(&self, end: Nanos) -> Vec<String> {
        let shape = &self.job.shape;
        let start = self.job.start;
        let seconds = (end - start.min(end)).as_secs_f64().max(1e-9);
        let mut notes = Vec::new();
        for (d, class) in ["reads", "writes", "trims"].into_iter().enumerate() {
            let (bytes, requests) = (self.direction_bytes[d], self.direction_requests[d]);
            if requests == 0 {
                continue;
            }
            let (mbps, iops) = (bytes as f64 / seconds / 1e6, requests as f64 / seconds);
            if let Some(floor) = shape.rate_min[d].filter(|f| mbps < f / 1e6) {
                notes.push(format!(
                    "job {} issued {mbps:.2} MB/s of {class}, below its rate_min of {:.2} MB/s (fio would have stopped it)",
                    self.name(),
                    floor / 1e6
                ));
            }
            if let Some(floor) = shape.rate_iops_min[d].filter(|f| iops < *f) {
                notes.push(format!(
                    "job {} issued {iops:.1} {class} a second, below its rate_iops_min of {floor} (fio would have stopped it)",
                    self.name()
                ));
            }
        }
        notes
    }

    fn iodepth(&self) -> u32 {
        match &self.job.kind {
            JobKind::Synthetic(s) => s.arrival.iodepth,
            JobKind::Trace(_) => self.job.shape.iolog_pacing.map_or(1, |p| p.iodepth),
        }
    }
}

/// A time in milliseconds, as few decimals as it needs (up to three).
fn millis(time: Nanos) -> String {
    let text = format!("{:.3}", time.0 as f64 / 1e6);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} ms")
}

impl Generator {
    /// The report's notes on what steered the job: its latency target's
    /// search, its flow, and a trace's end or backlog.
    pub fn control_notes(&self) -> Vec<String> {
        [
            self.depth_search_note(),
            self.steady_state_note(),
            self.too_slow_note(),
            self.flow_note(),
            self.trace_note(),
            self.backlog_note(),
            self.random_map_note(),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// What its random map changed: requests cut at a block already taken
    /// (fio's `mark_random_map` shortens them too), and loops that ended
    /// with every block taken, short of their bytes, where a request that
    /// does not fill its last block takes it whole (fio 3.33, `rw=randread
    /// bsrange=4k-6k size=1m`: 927,744 bytes with randseed=1).
    fn random_map_note(&self) -> Option<String> {
        let (cut, loops) = (
            self.shaped.requests_cut_by_map,
            self.shaped.loops_cut_by_map,
        );
        let mut said = Vec::new();
        if cut > 0 {
            said.push(format!(
                "{cut} request(s) were cut at a block its random map had already taken this pass"
            ));
        }
        if loops > 0 {
            said.push(format!("{loops} loop(s) ended when the random map had every block of the job's files taken, short of the loop's bytes (a request that does not fill its last block takes it whole)"));
        }
        (!said.is_empty())
            .then(|| format!("job {}: {}, as fio's do", self.job.name, said.join("; ")))
    }

    /// How the job's flow held it (its share against its weight's).
    fn flow_note(&self) -> Option<String> {
        let member = self.shaped.flow.as_ref()?;
        let (issued, flow_requests, weights) = member.shares();
        let w = &member.weight;
        let share = issued as f64 * 100.0 / flow_requests.max(1) as f64;
        let weight_share = match weights {
            0 => "its weights add up to 0 in 32 bits: no job is held back".to_string(),
            _ => format!("{:.1}%", f64::from(w.weight) * 100.0 / f64::from(weights)),
        };
        let wait = if w.sleep == Nanos::ZERO {
            format!(
                "looking again every {} µs (fio spins: flow_sleep=0)",
                SPIN.0 / 1_000
            )
        } else {
            format!(
                "each time waiting for its requests out and flow_sleep={} µs",
                w.sleep.0 / 1_000
            )
        };
        Some(format!(
            "job {}: flow={} of flow {}'s weight {weights} ({weight_share}): {issued} of the flow's {flow_requests} requests ({share:.1}%); held back {} times, {wait}",
            self.name(),
            w.weight,
            w.id,
            member.holds,
        ))
    }
}

/// The request that took longer than the job's `max_latency`.
#[derive(Clone, Copy, Debug)]
pub(super) struct TooSlow {
    at: Nanos,
    op: Op,
    latency: Nanos,
    limit: Nanos,
}

impl Generator {
    /// fio's think time (its `handle_thinktime`): once `thinktime_blocks`
    /// requests have completed since the last think, looked at after each
    /// issue and each completion, the job issues nothing more until every
    /// request it has out completes (fio's `io_u_quiesce`), then waits
    /// `thinktime`, on a rate's schedule too. The completions counted while
    /// it drains count towards the next think, as fio counts them: at depth
    /// 8 and `thinktime_blocks=1`, one request goes between thinks after the
    /// first eight (fio 3.33, libaio, 10 ms: 106 reads in 1 s). An open-loop
    /// job held by its iodepth otherwise resumes on its own schedule (the
    /// loop never moves time backwards); a closed-loop one at once.
    /// Returns how long it thinks now (zero when it does not).
    pub(super) fn think_after_completion(&mut self, now: Nanos) -> Nanos {
        let JobKind::Synthetic(s) = &self.job.kind else {
            return Nanos::ZERO;
        };
        let closed_loop = s.arrival.iops.is_none() && s.arrival.bytes_per_s.is_none();
        let thinktime = s.arrival.thinktime;
        if !closed_loop && thinktime == Nanos::ZERO {
            return Nanos::ZERO;
        }
        self.shaped.completions += 1;
        self.start_draining_to_think();
        let think = if self.shaped.draining_to_think && self.outstanding == 0 {
            self.shaped.draining_to_think = false;
            thinktime
        } else {
            Nanos::ZERO
        };
        let ready = now + think;
        // Under a rate, fio catches up with the rate's schedule after a
        // think (its default `rate_ignore_thinktime=0`): the schedule is
        // kept, and the requests it fell behind by go as soon as they may.
        if !closed_loop && think > Nanos::ZERO {
            self.shaped.schedule_before_think = self.shaped.schedule_before_think.or(self.due);
        }
        self.due = Some(self.due.map_or(ready, |at| at.max(ready)));
        think
    }

    /// Whether enough completions came since the last think for another:
    /// the job then drains before it thinks (see
    /// [`think_after_completion`](Self::think_after_completion)).
    pub(super) fn start_draining_to_think(&mut self) {
        let JobKind::Synthetic(s) = &self.job.kind else {
            return;
        };
        let every = u64::from(self.job.shape.thinktime_blocks.max(1));
        let state = &mut self.shaped;
        if s.arrival.thinktime > Nanos::ZERO
            && !state.draining_to_think
            && state.completions >= state.thought_at + every
        {
            state.draining_to_think = true;
            state.thought_at = state.completions;
        }
    }
}
