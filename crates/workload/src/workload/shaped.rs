//! Where a fio-shaped job is in its pattern: the state its draws, rates,
//! controls and read-back keep between requests.

use iosteer_sched::Nanos;

use super::controls::TooSlow;
use super::draw;
use super::random_map::RandomMap;
use super::rounds::RoundsState;
use crate::flow::FlowMember;

/// Where a fio-shaped job is in its pattern.
#[derive(Debug, Default)]
pub(super) struct ShapedState {
    /// Next sequential offset of each file and direction (read, write,
    /// trim), relative to the file: fio walks directions apart.
    pub(super) file_cursors: Vec<[u64; 3]>,
    /// fio's `file_service_type`: the file requests go to, how many more
    /// go there, the next in turn, and the bytes moved in it (`sequential`).
    pub(super) current_file: usize,
    pub(super) file_left: u32,
    pub(super) next_file: usize,
    pub(super) file_moved: u64,
    /// The files of a sequential job's pass that are done, when its files
    /// are drawn uniformly ([`draw::DoneFiles`]).
    pub(super) files_done: draw::DoneFiles,
    /// The range the files' distribution lays its hottest rank at, drawn
    /// once a job, when fio draws it (zipf and pareto without a center).
    pub(super) hottest_range: Option<u64>,
    /// Requests left at the current random offset run (`rw=randread:N`).
    pub(super) run_left: u32,
    /// Where a random job's requests that follow on go, in each file and
    /// direction ([`draw::FollowOn`]).
    pub(super) follow_ons: Vec<[draw::FollowOn; 3]>,
    /// A direction's pass reached the end ([`JobShape::ends_at_pass_end`]).
    pub(super) pass_over: bool,
    /// Writes since the last `fsync=N` sync and `fdatasync=N` sync.
    pub(super) writes_since_flush: [u32; 2],
    /// Writes are a multiple of `fsync=N`: a sync goes after each read
    /// until the next write, as fio's does.
    pub(super) sync_after_reads: bool,
    pub(super) completions: u64,
    pub(super) flushed_at_end: bool,
    pub(super) last_issue_at: Nanos,
    /// Per-direction rates ([`JobShape::direction_rates`]): when reads and
    /// writes may next go.
    pub(super) rate_due: [Nanos; 2],
    /// fio's flow ([`crate::flow`]), and whether the job, held back by it,
    /// is letting its requests out complete.
    pub(super) flow: Option<FlowMember>,
    pub(super) flow_quiescing: bool,
    /// The queue filled and drains until this few are out
    /// ([`JobShape::queue_drain`]).
    pub(super) draining: Option<u32>,
    /// The request that took longer than its `max_latency`: the job stops.
    pub(super) too_slow: Option<TooSlow>,
    /// A rated job's schedule when it last began a think: after the think
    /// it catches up with it, as fio does.
    pub(super) schedule_before_think: Option<Nanos>,
    /// Behind its rate's schedule after a think: the next arrival counts
    /// from when this one was due.
    pub(super) catching_up: bool,
    /// Where a job of strided zones is ([`JobShape::zones`]).
    pub(super) zone: draw::ZoneCursor,
    /// fio's `serialize_overlap`: the job's requests in flight.
    pub(super) overlaps: draw::Overlaps,
    /// fio's think time: draining before a think, and the completions
    /// counted at the last one.
    pub(super) draining_to_think: bool,
    pub(super) thought_at: u64,
    /// fio's rounds ([`crate::job_shape::Rounds`]).
    pub(super) rounds: Option<RoundsState>,
    /// An `fsync=N` flush held back while a backlog's read-backs go first.
    pub(super) flush_owed: bool,
    /// An `fsync=N` flush due after a write that filled the iodepth: it
    /// goes when a completion frees a slot, as fio's next request does.
    pub(super) flush_next: bool,
    /// Issuing is over but for that flush ([`super::Generator::ended`]).
    pub(super) only_sync_left: bool,
    /// The trims a planned write waits for ([`JobShape::writes_after_trims`]).
    pub(super) trims_awaited: Vec<u64>,
    /// The planned write's own trim went ([`JobShape::writes_after_trims`]).
    pub(super) write_trimmed: bool,
    /// fio's random map of each file ([`JobShape::random_map`]), made at
    /// the first random request.
    pub(super) random_maps: Vec<RandomMap>,
    /// Every file's pass is over: the job's loop ends (fio's files done),
    /// and how many loops ended so short of their bytes. `maps_fill`: the
    /// request drawn last takes the last free block, so its issue (not
    /// its draw: a drawn request may be held) ends the pass.
    pub(super) maps_full: bool,
    pub(super) maps_fill: bool,
    pub(super) loops_cut_by_map: u32,
    /// Requests the random map cut at a block already taken.
    pub(super) requests_cut_by_map: u64,
}
