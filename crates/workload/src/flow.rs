//! fio's flows (`flow`, `flow_id`, `flow_sleep`): jobs of one flow keep
//! their shares of the flow's requests in the ratio of their weights. The
//! flow counts every request its jobs issue (from 1); before each request a
//! job compares its own count's share of the flow's count with its weight's
//! share of the flow's weights, and while it is ahead it does not issue: it
//! lets its requests out complete and waits `flow_sleep` (fio's quiesce and
//! sleep), or with no `flow_sleep` looks again at once (fio spins; here,
//! every [`SPIN`]). A job that ends leaves the flow: its weight and its
//! count are taken out of the flow's. The weights of every job of the file
//! are in the flow from the start, as fio registers them when it reads the
//! file. Weights add up as fio's do, in 32 unsigned bits: fio 3.33 takes a
//! negative `flow` (the sign of its older flow counter, as in its
//! examples/butterfly.fio) as a large weight, and a flow whose weights then
//! add up to nothing holds no job back.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use iosteer_sched::Nanos;

/// How often a job held back with no `flow_sleep` looks again (fio spins).
pub const SPIN: Nanos = Nanos::from_micros(10);

/// A job file's flow options for a job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowWeight {
    /// fio's `flow_id` (default 0).
    pub id: u32,
    /// fio's `flow`: the job's weight, up to 1000 (a negative one as fio
    /// stores it, in 32 unsigned bits).
    pub weight: u32,
    /// fio's `flow_sleep`: the wait after being held back.
    pub sleep: Nanos,
}

/// One flow's counts, shared by its jobs.
#[derive(Debug)]
pub struct FlowGroup {
    /// Requests issued by the flow's jobs that are still in it, plus one
    /// (fio starts it at 1).
    requests: AtomicU64,
    /// The weights of its jobs still in it (wrapping, as fio's).
    weights: AtomicU32,
    /// Requests issued by all its jobs, and all their weights, for the
    /// report.
    requests_ever: AtomicU64,
    weights_ever: AtomicU32,
}

/// A job's place in its flow.
#[derive(Debug)]
pub struct FlowMember {
    pub weight: FlowWeight,
    group: Arc<FlowGroup>,
    /// Requests the job issued (fio's per-job flow counter).
    issued: u64,
    /// Times it was held back.
    pub holds: u64,
    left: bool,
}

impl FlowMember {
    /// Whether the job may issue a request now: its share of the flow's
    /// requests is not ahead of its weight's share. Counted when it may.
    pub fn may_issue(&mut self) -> bool {
        let requests = self.group.requests.load(Ordering::Relaxed) as f64;
        // A flow whose weights add up to 0 divides by it, as fio's does.
        let weights = f64::from(self.group.weights.load(Ordering::Relaxed));
        let ahead = self.issued as f64 / requests > f64::from(self.weight.weight) / weights;
        if ahead {
            self.holds += 1;
            return false;
        }
        self.group.requests.fetch_add(1, Ordering::Relaxed);
        self.group.requests_ever.fetch_add(1, Ordering::Relaxed);
        self.issued += 1;
        true
    }

    /// The job ended: its weight and requests leave the flow (once).
    pub fn leave(&mut self) {
        if std::mem::replace(&mut self.left, true) {
            return;
        }
        self.group
            .requests
            .fetch_sub(self.issued, Ordering::Relaxed);
        self.group
            .weights
            .fetch_sub(self.weight.weight, Ordering::Relaxed);
    }

    /// The job's requests, all the flow's requests and all its weights
    /// (fio aims the first two's ratio at the job's weight's share of the
    /// third).
    pub fn shares(&self) -> (u64, u64, u32) {
        let requests = self.group.requests_ever.load(Ordering::Relaxed);
        let weights = self.group.weights_ever.load(Ordering::Relaxed);
        (self.issued, requests, weights)
    }
}

/// The flow members of jobs with these weights (`None`: not in a flow),
/// those of one flow id sharing its counts.
pub fn members(weights: &[Option<FlowWeight>]) -> Vec<Option<FlowMember>> {
    let mut groups: HashMap<u32, Arc<FlowGroup>> = HashMap::new();
    weights
        .iter()
        .map(|weight| {
            let weight = weight.clone()?;
            let group = groups.entry(weight.id).or_insert_with(|| {
                Arc::new(FlowGroup {
                    requests: AtomicU64::new(1),
                    weights: AtomicU32::new(0),
                    requests_ever: AtomicU64::new(0),
                    weights_ever: AtomicU32::new(0),
                })
            });
            group.weights.fetch_add(weight.weight, Ordering::Relaxed);
            group
                .weights_ever
                .fetch_add(weight.weight, Ordering::Relaxed);
            Some(FlowMember {
                weight,
                group: Arc::clone(group),
                issued: 0,
                holds: 0,
                left: false,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weight(id: u32, weight: u32) -> Option<FlowWeight> {
        Some(FlowWeight {
            id,
            weight,
            sleep: Nanos::ZERO,
        })
    }

    #[test]
    fn members_of_a_flow_issue_in_the_ratio_of_their_weights() {
        let mut members = members(&[weight(0, 1), weight(0, 8), None, weight(1, 5)]);
        assert!(members[2].is_none());
        // Each asks in turn, as jobs of equal speed would.
        let mut issued = [0u32; 2];
        for _ in 0..9000 {
            for (i, member) in members[..2].iter_mut().enumerate() {
                if member.as_mut().unwrap().may_issue() {
                    issued[i] += 1;
                }
            }
        }
        // The heavier job issues every time; the other one in eight.
        assert_eq!(issued[1], 9000);
        assert!((1124..=1126).contains(&issued[0]), "{issued:?}");
        // Alone in its flow, a job is never held back.
        let alone = members[3].as_mut().unwrap();
        assert!((0..100).all(|_| alone.may_issue()));
    }

    #[test]
    fn a_job_that_leaves_takes_its_weight_and_count_with_it() {
        let mut members = members(&[weight(0, 1), weight(0, 1)]);
        let [Some(a), Some(b)] = &mut members[..] else {
            unreachable!()
        };
        // Half the flow's weight: a may take the flow's requests up to half
        // of them (the count starts at 1, as fio's).
        assert!(a.may_issue() && a.may_issue() && !a.may_issue());
        b.leave();
        assert_eq!(b.shares(), (0, 2, 2), "the flow's whole run");
        assert!((0..10).all(|_| a.may_issue()), "alone now");
    }

    #[test]
    fn weights_that_wrap_to_nothing_hold_no_job_back_as_in_fio() {
        // butterfly.fio: flow=2 and flow=-2, which fio 3.33 stores as
        // 4294967294: the weights add up to 0 and neither job is held.
        let negative = (-2i32) as u32;
        let mut members = members(&[weight(0, 2), weight(0, negative)]);
        for member in members.iter_mut().flatten() {
            assert!((0..100).all(|_| member.may_issue()));
        }
    }
}
