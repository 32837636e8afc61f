use super::ring::{abandon_probe, probe_read, Probe};
use super::*;
use crate::target::OpenOptionsSpec;
use iosteer_sched::Request;
use std::os::unix::fs::FileExt;
use std::path::Path;
use tempfile::TempPath;

/// A fresh file of `size` bytes in the build machine's temp directory, its
/// name starting `name`; removed when the path is dropped.
pub(crate) fn temp_file(name: &str, size: u64) -> TempPath {
    let file = tempfile::Builder::new().prefix(name).tempfile().unwrap();
    file.as_file().set_len(size).unwrap();
    file.into_temp_path()
}

/// A fresh file (its name starting `name`) of `size` bytes and an engine on it (verifying when
/// `verify`), or `None` where io_uring is not permitted.
fn engine_on_fresh_file(name: &str, size: u64, verify: bool) -> Option<(TempPath, Engine)> {
    let path = temp_file(name, size);
    let engine = engine_or_skip(&path, verify)?;
    Some((path, engine))
}

/// An engine on `path`, or `None` (with the reason printed, so the skip
/// shows in the test output) where io_uring is not permitted.
pub(crate) fn engine_or_skip(path: &Path, verify: bool) -> Option<Engine> {
    let config = EngineConfig {
        queue_depth: 8,
        max_io_bytes: 64 << 10,
        verify,
        ..EngineConfig::default()
    };
    engine_with(path, &config)
}

/// An engine of `config` on `path` (O_DIRECT where the file system has it),
/// or `None` as for [`engine_or_skip`].
pub(crate) fn engine_with(path: &Path, config: &EngineConfig) -> Option<Engine> {
    let spec = OpenOptionsSpec {
        writes: true,
        direct: true,
        ..OpenOptionsSpec::default()
    };
    let target = Target::open(path, &spec)
        .or_else(|_| {
            // A file system without O_DIRECT (tmpfs): buffered I/O.
            Target::open(
                path,
                &OpenOptionsSpec {
                    direct: false,
                    ..spec.clone()
                },
            )
        })
        .unwrap();
    match Engine::new(target, config) {
        Ok(engine) => Some(engine),
        Err(EngineError::Unsupported(e)) => {
            eprintln!("SKIPPED (counted): io_uring not permitted here: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

fn run_one(engine: &mut Engine, op: Op, offset: u64, len: u64) -> Finished {
    let request = Request::new(offset, op, offset, len, Nanos::ZERO);
    engine
        .submit(Command::single(request, Nanos::ZERO))
        .unwrap();
    let mut finished = Vec::new();
    while finished.is_empty() {
        engine.wait(Duration::from_millis(100)).unwrap();
        engine.reap(Nanos::ZERO, &mut finished);
    }
    finished.pop().unwrap()
}

#[test]
fn verified_writes_read_back_without_mismatches() {
    let Some((_, mut engine)) = engine_on_fresh_file("verify.img", 1 << 20, true) else {
        return;
    };
    for i in 0..16 {
        let f = run_one(&mut engine, Op::Write, i * 16384, 16384);
        assert_eq!((f.outcome, f.errno), (Outcome::Ok, None));
    }
    for i in 0..16 {
        assert_eq!(
            run_one(&mut engine, Op::Read, i * 16384, 16384).outcome,
            Outcome::Ok
        );
    }
    assert_eq!(run_one(&mut engine, Op::Flush, 0, 0).outcome, Outcome::Ok);
    let v = engine.verifier().unwrap();
    assert_eq!((v.checked, v.mismatches), (64, 0));
}

#[test]
fn a_corrupted_block_is_reported_with_its_offset() {
    let Some((path, mut engine)) = engine_on_fresh_file("corrupt.img", 1 << 20, true) else {
        return;
    };
    run_one(&mut engine, Op::Write, 0, 65536);
    // Flip one byte of the third block behind the engine's back (every
    // bit: writing 0xff changed nothing where the pattern held 0xff
    // already, one run in 256, and the test failed now and then).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut byte = [0u8];
    file.read_exact_at(&mut byte, 2 * 4096 + 100).unwrap();
    file.write_all_at(&[!byte[0]], 2 * 4096 + 100).unwrap();
    file.sync_all().unwrap();
    run_one(&mut engine, Op::Read, 0, 65536);
    let v = engine.verifier().unwrap();
    assert_eq!(v.checked, 16);
    assert_eq!(v.mismatches, 1, "{:?}", v.first);
    assert_eq!(v.first[0].0, 2 * 4096);
}

#[test]
fn errors_reach_the_request_that_caused_them() {
    let Some((_, mut engine)) = engine_on_fresh_file("errors.img", 1 << 20, false) else {
        return;
    };
    let past_the_end = run_one(&mut engine, Op::Read, 1 << 20, 4096);
    assert_eq!(past_the_end.outcome, Outcome::Error);
    // O_DIRECT refuses a misaligned offset (EINVAL) where it is in use.
    if engine.target().direct {
        let misaligned = run_one(&mut engine, Op::Write, 100, 4096);
        assert_eq!(misaligned.errno, Some(libc::EINVAL));
    }
    assert_eq!(
        run_one(&mut engine, Op::Write, 0, 4096).outcome,
        Outcome::Ok
    );
    assert_eq!(engine.in_flight(), 0);
}

#[test]
fn every_reaping_mode_completes_what_it_sends() {
    let path = temp_file("reap.img", 1 << 20);
    for reap in Reap::NAMES.map(|n| Reap::from_name(n).unwrap()) {
        for iopoll in [false, true] {
            let config = EngineConfig {
                queue_depth: 4,
                max_io_bytes: 64 << 10,
                verify: true,
                reap,
                iopoll,
                keep_read_data: false,
            };
            let Some(mut engine) = engine_with(&path, &config) else {
                return;
            };
            // Asked for, IOPOLL is either in use or refused with a reason.
            assert_eq!(iopoll, engine.iopoll() || engine.iopoll_refused().is_some());
            for i in 0..8 {
                let f = run_one(&mut engine, Op::Write, i * 4096, 4096);
                assert_eq!(f.outcome, Outcome::Ok, "{reap:?} {iopoll}");
                let f = run_one(&mut engine, Op::Read, i * 4096, 4096);
                assert_eq!(f.outcome, Outcome::Ok, "{reap:?} {iopoll}");
            }
            let v = engine.verifier().unwrap();
            assert_eq!((v.checked, v.mismatches), (8, 0), "{reap:?} {iopoll}");
        }
    }
}

#[test]
fn a_queue_depth_or_buffer_size_past_the_limits_is_refused_up_front() {
    let config = |queue_depth, max_io_bytes| EngineConfig {
        queue_depth,
        max_io_bytes,
        ..EngineConfig::default()
    };
    for depth in [0, MAX_QUEUE_DEPTH + 1, 65_536, 1_000_000] {
        let err = config(depth, 4096).validate().unwrap_err();
        assert_eq!(err, ConfigError::QueueDepth { depth });
        let message = err.to_string();
        assert!(
            message.contains(&format!("1 to {MAX_QUEUE_DEPTH}")),
            "{message}"
        );
        assert!(!message.contains("--"), "names a flag: {message}");
    }
    assert!(config(1, 4096).validate().is_ok());
    assert!(config(MAX_QUEUE_DEPTH, 128 << 10).validate().is_ok());
    let err = config(MAX_QUEUE_DEPTH, 1 << 20).validate().unwrap_err();
    assert_eq!(
        err,
        ConfigError::BuffersTooLarge {
            depth: MAX_QUEUE_DEPTH,
            slot_bytes: 1 << 20,
            total: 4 << 30
        }
    );
    assert!(err.to_string().contains(&MAX_BUFFER_BYTES.to_string()));
    assert_eq!(config(8, 0).validate(), Err(ConfigError::NoRequestSize));
    // Engine::new refuses before it allocates or touches io_uring.
    let path = temp_file("depth0.img", 1 << 20);
    let target = Target::open(&path, &OpenOptionsSpec::default()).unwrap();
    let err = Engine::new(target, &config(0, 4096)).err().unwrap();
    assert!(matches!(
        err,
        EngineError::Config(ConfigError::QueueDepth { depth: 0 })
    ));
}

#[test]
fn a_refused_submission_then_drop_returns_promptly() {
    let path = temp_file("refused-drop.img", 1 << 20);
    let (done, finished) = std::sync::mpsc::channel();
    // The engine lives and dies on a thread of its own, so a hang fails
    // this test instead of stalling the suite.
    std::thread::spawn(move || {
        let Some(mut engine) = engine_or_skip(&path, false) else {
            let _ = done.send(());
            return;
        };
        let write = Request::new(1, Op::Write, 0, 4096, Nanos::ZERO);
        let wrong_length = [0u8; 100];
        engine
            .submit_with_data(Command::single(write, Nanos::ZERO), Some(&wrong_length))
            .unwrap();
        assert_eq!(engine.in_flight(), 1);
        drop(engine);
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(5))
        .expect("dropping the engine hung on a command that never reached the ring");
}

#[test]
fn an_iopoll_probe_that_never_completes_is_left_in_flight_with_its_own_buffer() {
    // A read from an empty pipe never completes: the probe must say its
    // read may still be in flight, so its buffer is leaked, not freed.
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let mut ring = match IoUring::new(8) {
        Ok(ring) => ring,
        Err(e) => {
            eprintln!("SKIPPED (counted): io_uring not permitted here: {e}");
            return;
        }
    };
    let probe = Buffers::new(1, BLOCK).unwrap();
    // SAFETY: on InFlight both the ring and the buffer are leaked below.
    let outcome = unsafe { probe_read(&mut ring, &probe, fds[0], Duration::from_millis(50)) };
    match outcome {
        Probe::InFlight(why) => {
            assert!(why.contains("did not complete"), "{why}");
            abandon_probe(ring, probe);
        }
        Probe::Done(result) => panic!("a read of an empty pipe completed: {result:?}"),
    }
}

#[test]
fn hybrid_naps_half_the_mean_completion_time_of_its_size_and_direction() {
    let mut times = CompletionTimes::default();
    assert_eq!(
        times.half(Op::Read, 4096),
        Duration::ZERO,
        "none seen: poll at once"
    );
    times.record(Op::Read, 4096, Duration::from_micros(100));
    assert_eq!(times.half(Op::Read, 4096), Duration::from_micros(50));
    // A mean, moving an eighth per completion; other sizes and the other
    // direction are apart.
    times.record(Op::Read, 4096, Duration::from_micros(900));
    assert_eq!(times.half(Op::Read, 4096), Duration::from_micros(100));
    assert_eq!(times.half(Op::Read, 1 << 20), Duration::ZERO);
    assert_eq!(times.half(Op::Write, 4096), Duration::ZERO);
    assert_eq!(times.half(Op::Trim, 4096), Duration::ZERO);
}

#[test]
fn a_trim_punches_a_hole_in_a_file() {
    use std::os::unix::fs::MetadataExt;
    let Some((path, mut engine)) = engine_on_fresh_file("trim.img", 4 << 20, false) else {
        return;
    };
    run_one(&mut engine, Op::Write, 0, 65536);
    run_one(&mut engine, Op::Flush, 0, 0);
    let before = std::fs::metadata(&path).unwrap().blocks();
    assert_eq!(
        run_one(&mut engine, Op::Trim, 0, 65536).outcome,
        Outcome::Ok
    );
    let after = std::fs::metadata(&path).unwrap().blocks();
    assert!(after < before, "blocks {before} -> {after}");
}

/// Found by a review: a trim and a write of the same bytes sent together
/// (fio's `trimwrite`, `iosteer_trim_ahead`) left most of the file a hole,
/// the kernel's hole punch landing after the write.
#[test]
fn a_write_sent_behind_a_trim_of_its_bytes_is_not_punched_away() {
    let Some((path, mut engine)) = engine_on_fresh_file("trimwrite.img", 1 << 20, false) else {
        return;
    };
    let (pieces, len) = (16u64, 64u64 << 10);
    let mut finished = Vec::new();
    for piece in 0..pieces {
        for op in [Op::Trim, Op::Write, Op::Read] {
            let request = Request::new(piece, op, piece * len, len, Nanos::ZERO);
            engine
                .submit(Command::single(request, Nanos::ZERO))
                .unwrap();
        }
        // The write waits for its trim, the read behind the write.
        assert!(engine.held.len() >= 2, "{} held", engine.held.len());
        let done = finished.len() + 3;
        while finished.len() < done {
            engine.wait(Duration::from_millis(100)).unwrap();
            engine.reap(Nanos::ZERO, &mut finished);
        }
        assert_eq!(finished[done - 3].command.op, Op::Trim, "the trim first");
    }
    assert!(finished.iter().all(|f| f.outcome == Outcome::Ok));
    // Allocated, not what the bytes are: a slot's buffer may hold what a
    // read found.
    use std::os::unix::fs::MetadataExt;
    let allocated = std::fs::metadata(&path).unwrap().blocks() * 512;
    assert!(allocated >= pieces * len, "{allocated} bytes allocated");
}
