//! What steers a job beyond its rate and depth: fio's latency target (the
//! depth the job searches, [`crate::depth_search`]), and when the job's
//! requests count in the figures.

use iosteer_sched::{Nanos, Op, Request};

use super::{Generator, Job, JobKind};
use crate::depth_search::{DepthSearch, Outcome};

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
        self.depth_search
            .as_ref()
            .map_or(iodepth, DepthSearch::limit)
    }

    /// Tells the job's depth search that `request` completed at `now`.
    pub(super) fn search_depth(&mut self, request: &Request, now: Nanos) {
        let counts = now >= self.job.start + self.job.shape.ramp;
        let outstanding = self.outstanding;
        if let (Some(search), false) = (&mut self.depth_search, request.op == Op::Flush) {
            let latency = now - request.submitted.min(now);
            search.completed(now, latency, outstanding, counts);
        }
    }

    /// From when the job's requests count in the figures: after its ramp,
    /// or, for a job searching its depth for a latency target, from its
    /// final window at the depth found (fio clears a job's figures then);
    /// `None` while it has not got there.
    pub fn measured_from(&self) -> Option<Nanos> {
        let after_ramp = self.job.start + self.job.shape.ramp;
        let Some(search) = &self.depth_search else {
            return Some(after_ramp);
        };
        if search.target().keep_adjusting {
            return Some(after_ramp);
        }
        search
            .final_window_since()
            .map(|since| since.max(after_ramp))
    }
}

impl Generator {
    /// What the job's depth search found, for the report's notes (fio
    /// prints it as its `latency : target=..., depth=N` line).
    pub fn depth_search_note(&self) -> Option<String> {
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
                "depth {depth} found (depths tried: {tried}); the figures are the final window at it, as fio reports them (it clears a job's figures then), and the job ended after that window, as fio's does"
            ),
            Outcome::FinalWindow => format!(
                "depth {depth} found (depths tried: {tried}); the job stopped (its runtime or size) during its final window at it, which the figures hold"
            ),
            Outcome::GaveUp { latency } => format!(
                "a request took {} at depth 1 with every request bound to the target (latency_percentile=100): fio ends the job there with an error (ETIMEDOUT, \"max latency exceeded\"), and the job stopped issuing; its {} requests are not in the figures (fio reports them)",
                millis(*latency),
                self.issued()
            ),
            Outcome::Searching => format!(
                "the search had not settled when the job stopped (depths tried: {tried}; its runtime or size came first): fio then reports all of its requests, none of its {} are in the figures here",
                self.issued()
            ),
        };
        Some(format!("{head}: {body}"))
    }

    fn iodepth(&self) -> u32 {
        match &self.job.kind {
            JobKind::Synthetic(s) => s.arrival.iodepth,
            JobKind::Trace(_) => 1,
        }
    }
}

/// A time in milliseconds, as few decimals as it needs (up to three).
fn millis(time: Nanos) -> String {
    let text = format!("{:.3}", time.0 as f64 / 1e6);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} ms")
}
