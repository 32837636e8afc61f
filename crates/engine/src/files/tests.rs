use std::fs::File;

use super::*;
use iosteer_workload::fio;

fn jobs(text: &str, capacity: u64) -> Vec<Job> {
    fio::parse(text, "t.fio", capacity).unwrap()
}

fn in_dir(dir: &Path) -> FileOptions {
    FileOptions {
        target: Some(dir.to_path_buf()),
        ..FileOptions::default()
    }
}

/// The jobs of `text` (on a drive of `capacity` bytes) placed in `dir`: the
/// jobs as placed, and the placement.
fn place_in(dir: &Path, text: &str, capacity: u64) -> Result<(Vec<Job>, Placement), FilesError> {
    let mut jobs = jobs(text, capacity);
    let placed = place(&mut jobs, &in_dir(dir))?;
    Ok((jobs, placed))
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn named_files_are_created_at_their_share_and_placed_apart() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let text = "[w]\nrw=randwrite\nbs=4k\nfilename=a:b\nsize=2m\n[r]\nrw=randread\nbs=4k\nfilename=b\nsize=1m\noffset=64k\n";
    let (jobs, placed) = place_in(dir, text, 1 << 40).unwrap();
    assert_eq!(names(dir), ["a", "b"]);
    let sizes: Vec<u64> = placed.targets.iter().map(|(t, _)| t.size).collect();
    // b: the writer's 1 MiB share, and the reader's 64 KiB + 1 MiB.
    assert_eq!(sizes, [1 << 20, (1 << 20) + (64 << 10)]);
    let bases: Vec<u64> = placed.targets.iter().map(|(_, b)| *b).collect();
    assert_eq!(bases[0], 0);
    assert!(bases[1] > sizes[0], "a gap between files: {bases:?}");
    assert_eq!(jobs[0].shape.files.starts, [0, bases[1]]);
    let JobKind::Synthetic(r) = &jobs[1].kind else {
        panic!()
    };
    assert_eq!(
        r.offset,
        bases[1] + (64 << 10),
        "one file: the offset moves"
    );
    // b is read and was created: laid out, with no hole left.
    assert!(
        placed.notes.iter().any(|n| n.contains("laid out")),
        "{:?}",
        placed.notes
    );
    let b = File::open(dir.join("b")).unwrap();
    assert_eq!(hole_bytes(&b, &[(0, sizes[1])]), 0);
}

#[test]
fn jobs_without_names_get_fios_default_names_in_the_directory() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    place_in(
        dir,
        "[job]\nrw=write\nbs=4k\nnrfiles=2\nsize=64k\nnumjobs=2\n",
        1 << 40,
    )
    .unwrap();
    assert_eq!(names(dir), ["job.0.0", "job.0.1", "job.1.0", "job.1.1"]);
}

#[test]
fn a_sparse_file_read_in_place_is_named_and_an_unsized_missing_file_refused() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let sparse = dir.join("s");
    File::create(&sparse).unwrap().set_len(1 << 20).unwrap();
    let (_, placed) = place_in(dir, "[r]\nrw=read\nbs=4k\nfilename=s\n", 1 << 20).unwrap();
    assert!(
        placed.notes.iter().any(|n| n
            .contains("1 MiB of the regions the jobs read from (bytes 0 to 1048576) are holes")),
        "{:?}",
        placed.notes
    );
    let err = place_in(dir, "[r]\nrw=read\nbs=4k\nfilename=none\n", 1 << 20)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("job r") && err.contains("does not exist") && err.contains("size="),
        "{err}"
    );
    assert!(!dir.join("none").exists());
}

#[test]
fn a_target_file_no_job_uses_is_refused() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let mut named = jobs("[w]\nrw=write\nbs=4k\nfilename=x\nsize=64k\n", 1 << 40);
    let options = FileOptions {
        target: Some(dir.join("t.img")),
        size: Some(1 << 20),
        ..FileOptions::default()
    };
    let err = place(&mut named, &options).unwrap_err();
    assert!(matches!(err, FilesError::TargetUnused { .. }), "{err}");
}

#[test]
fn a_job_naming_the_target_itself_runs_on_it() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let target = dir.join("t.img");
    let text = format!("[r]\nrw=randread\nbs=4k\nfilename={}\n", target.display());
    let mut named = jobs(&text, 1 << 20);
    let options = FileOptions {
        target: Some(target.clone()),
        size: Some(1 << 20),
        ..FileOptions::default()
    };
    let placed = place(&mut named, &options).unwrap();
    assert_eq!(placed.targets.len(), 1);
    assert_eq!(placed.targets[0].0.size, 1 << 20);
}

/// A target that is not there is created to the size the jobs give, as
/// fio creates a job's file (it needed `--size`); without one it is refused.
#[test]
fn a_missing_target_is_created_to_the_jobs_size() {
    let temp = tempfile::tempdir().unwrap();
    let target = temp.path().join("new.img");
    let options = FileOptions {
        target: Some(target.clone()),
        ..FileOptions::default()
    };
    let mut unsized_jobs = jobs("[r]\nrw=randread\nbs=4k\n", 1 << 40);
    assert!(place(&mut unsized_jobs, &options).is_err());
    assert!(!target.exists());
    let mut sized = jobs("[r]\nrw=randread\nbs=4k\nsize=1m\n", 1 << 40);
    let placed = place(&mut sized, &options).unwrap();
    assert_eq!(placed.targets[0].0.size, 1 << 20);
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 1 << 20);
}

/// What a file grows by is reserved before the run, as fio's default
/// `fallocate=native` does, so a file system too small for it refuses the
/// run at the start rather than failing its writes one by one; fio's
/// `fallocate=none` leaves it sparse.
#[test]
fn a_created_write_only_file_has_its_space_reserved_unless_fallocate_none() {
    use std::os::unix::fs::MetadataExt;
    for (option, reserved) in [("", true), ("fallocate=none\n", false)] {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let text = format!("[w]\nrw=randwrite\nbs=4k\nfilename=a\nsize=2m\n{option}");
        place_in(dir, &text, 1 << 40).unwrap();
        let meta = std::fs::metadata(dir.join("a")).unwrap();
        assert_eq!(meta.len(), 2 << 20);
        assert_eq!(meta.blocks() * 512 >= 2 << 20, reserved, "{option}");
    }
}

#[test]
fn a_file_to_lay_out_larger_than_its_file_system_is_refused_before_writing() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    // A read job on a file bigger than the temp file system has free: the
    // layout would fill the disk and fail half way.
    let free = free_bytes(dir).expect("statvfs on the temp directory");
    let size = free.saturating_add(1 << 30).min(u64::MAX / 4);
    let text = format!("[r]\nrw=randread\nbs=4k\nfilename=big\nsize={size}\n");
    let err = place_in(dir, &text, u64::MAX / 2).unwrap_err();
    assert!(matches!(err, FilesError::NoRoom { .. }), "{err}");
    assert!(
        err.to_string().contains("big") && err.to_string().contains("free"),
        "{err}"
    );
    assert!(names(dir).is_empty(), "nothing created: {:?}", names(dir));
}

/// Two files that each fit the free space but not together: refused before
/// either is created (the check adds up what every file grows by on one
/// file system).
#[test]
fn files_that_fit_one_by_one_but_not_together_are_refused_before_any_is_created() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let free = free_bytes(dir).expect("statvfs on the temp directory");
    // Each file 60% of the free space (rounded to MiB), two files.
    let each = (free / 10 * 6) >> 20 << 20;
    let text = format!("[r]\nrw=randread\nbs=4k\nfilename=a:b\nsize={}\n", each * 2);
    let err = place_in(dir, &text, u64::MAX / 2).unwrap_err();
    assert!(matches!(err, FilesError::NoRoom { files: 2, .. }), "{err}");
    assert!(names(dir).is_empty(), "nothing created: {:?}", names(dir));
}

/// Direct I/O refuses a job whose requests are finer than the file
/// system's direct-I/O boundary, with several files before any is made
/// (where the kernel reports the boundary; elsewhere there is nothing to
/// check here).
#[test]
fn a_direct_job_finer_than_the_direct_io_boundary_is_refused_before_any_file_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let Some(boundary) = direct_io_alignment(&dir.path().join("new")) else {
        return;
    };
    let options = FileOptions {
        direct: true,
        ..in_dir(dir.path())
    };
    let text = "[fine]\nrw=read\nbs=4k\nsize=1m\nfilename=fine\n[odd]\nrw=randwrite\nbs=1000\nsize=1m\nfilename=odd\n";
    let mut both = jobs(text, 1 << 30);
    let err = place(&mut both, &options).unwrap_err().to_string();
    let needs = format!("multiples of {boundary} bytes");
    assert!(
        err.starts_with("job odd:") && err.contains("8-byte") && err.contains(&needs),
        "{err}"
    );
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}

/// The sections whose jobs ask for another I/O mode than the run's are
/// named once each; jobs of no job file ask nothing.
#[test]
fn jobs_asking_for_another_io_mode_are_named() {
    let text = "[global]\ndirect=1\n[r]\nrw=read\nnumjobs=2\n[w]\nrw=write\nbuffered=1\n";
    let mut jobs = jobs(text, 1 << 30);
    let said = |jobs: &[Job], direct| io_mode_note(jobs, direct).unwrap_or_default();
    assert!(said(&jobs, true).starts_with("w: fio would run these jobs buffered"));
    assert!(said(&jobs, false).starts_with("r: direct=1 asks for O_DIRECT"));
    jobs.iter_mut().for_each(|job| job.shape.direct = None);
    assert_eq!(io_mode_note(&jobs, true), None);
}

/// A job's flushes go to its own files, as fio syncs only those: the
/// placement says which targets each job uses.
#[test]
fn each_job_s_own_targets_are_known_for_its_flushes() {
    let temp = tempfile::tempdir().unwrap();
    let text = "[w]\nrw=write\nbs=4k\nfilename=a:b\nsize=2m\nfsync=1\n[v]\nrw=write\nbs=4k\nfilename=b\nsize=1m\nfsync=1\n[u]\nrw=write\nbs=4k\nfilename=c\nsize=1m\n";
    let (_, placed) = place_in(temp.path(), text, 1 << 40).unwrap();
    assert_eq!(names(temp.path()), ["a", "b", "c"]);
    assert_eq!(placed.job_targets, [vec![0, 1], vec![1], vec![2]]);
}

/// A job over several files, run again on the files its first run made:
/// its size spans them (`nrfiles=2 size=64k`, two files of 32 KiB; it had
/// been refused as not fitting a 32 KiB drive, the largest file alone).
#[test]
fn a_job_s_existing_files_together_hold_its_size() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let text = "[j]\nrw=write\nbs=4k\nsize=64k\nnrfiles=2\n";
    for name in ["j.0.0", "j.0.1"] {
        std::fs::write(dir.join(name), vec![0u8; 32 << 10]).unwrap();
    }
    let options = in_dir(dir);
    let parsed = parse_job_file(text, "t.fio", &options).unwrap();
    assert_eq!(parsed.jobs.len(), 1);
    assert_eq!(capacity(&parsed.jobs, &options), Some(64 << 10));
}

/// fio 3.33 names a job's files after its section header even when
/// `name=` renames the job (`[job1] name=read_iops`: job1.0.0); they were
/// named read_iops.0.0.
#[test]
fn a_renamed_job_s_files_keep_its_header_s_name() {
    let jobs = jobs(
        "[job1]\nname=read_iops\nrw=write\nsize=64k\nnumjobs=2\n",
        1 << 30,
    );
    let dir = Path::new("d");
    let paths: Vec<PathBuf> = (jobs.iter())
        .flat_map(|j| job_paths(j, dir, None).unwrap())
        .collect();
    assert_eq!(paths, [dir.join("job1.0.0"), dir.join("job1.1.0")]);
}

/// A random verifying writer sized by its file was refused as keeping
/// 2^50 pieces to read back: the first read, against no size yet, counted
/// them (found by a review; fio runs it: 8,192 writes, 8,192 read-backs).
#[test]
fn a_random_verifier_sized_by_its_file_is_read_against_the_file() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    std::fs::write(dir.join("f"), vec![0u8; 1 << 20]).unwrap();
    let text = "[w]\nfilename=f\nrw=randwrite\nbs=4k\nverify=crc32c\n";
    let parsed = parse_job_file(text, "t.fio", &in_dir(dir)).unwrap();
    assert_eq!(parsed.jobs[0].end_offset(), 1 << 20);
    // A job that gives its size, and no file yet: still checked (a review
    // found 20,971,520 pieces taken where the limit is 16,777,216).
    let text = "[w]\nfilename=g\nrw=randwrite\nbs=1\nsize=20m\nverify=crc32c\n";
    let err = parse_job_file(text, "t.fio", &in_dir(dir)).unwrap_err();
    assert!(err.to_string().contains("to read back"), "{err}");
}

#[test]
fn a_layout_stopped_part_way_puts_the_file_back_as_it_was() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let text = "[r]\nfilename=new\nrw=read\nsize=4m\n";
    let mut jobs = jobs(text, 1 << 30);
    let options = FileOptions {
        stop: Some(|| true),
        ..in_dir(dir)
    };
    let err = place(&mut jobs, &options).unwrap_err();
    assert!(
        matches!(err, FilesError::LayoutStopped { total, .. } if total == 4 << 20),
        "{err}"
    );
    assert!(
        !dir.join("new").exists(),
        "a half laid-out file would pass as laid out"
    );
    // An existing file grown is cut back to its old size.
    std::fs::write(dir.join("new"), vec![1u8; 4096]).unwrap();
    let err = place(&mut jobs, &options).unwrap_err();
    assert!(matches!(err, FilesError::LayoutStopped { .. }), "{err}");
    assert_eq!(std::fs::metadata(dir.join("new")).unwrap().len(), 4096);
}

#[test]
fn a_job_past_the_files_that_exist_is_refused_as_past_them() {
    let temp = tempfile::tempdir().unwrap();
    let target = temp.path().join("small.img");
    std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
    let options = FileOptions {
        target: Some(target),
        ..FileOptions::default()
    };
    let err = parse_job_file("[r]\nsize=4m\nrw=read\n", "t.fio", &options).unwrap_err();
    assert!(
        matches!(err, FilesError::JobsPastFiles { size, .. } if size == 1 << 20),
        "{err}"
    );
    assert!(err.to_string().starts_with("t.fio:2:"), "{err}");
}

#[test]
fn regions_join_where_they_overlap_and_name_the_first_four() {
    assert_eq!(regions(&[(8, 12), (0, 4), (2, 6)]), "0 to 6, 8 to 12");
    let many: Vec<(u64, u64)> = (0..6).map(|i| (i * 10, i * 10 + 1)).collect();
    assert_eq!(
        regions(&many),
        "0 to 1, 10 to 11, 20 to 21, 30 to 31, 2 more"
    );
}

/// fio's `allow_file_create=0`: a missing file is refused, not created;
/// one that is there is used.
#[test]
fn a_job_that_may_not_create_its_file_is_refused_when_it_is_missing() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let text = "[r]\nrw=read\nbs=4k\nsize=64k\nfilename=f\nallow_file_create=0\n";
    let err = place_in(dir, text, 1 << 40).unwrap_err().to_string();
    assert!(err.contains("allow_file_create=0"), "{err}");
    assert!(names(dir).is_empty(), "nothing created");
    std::fs::write(dir.join("f"), vec![1u8; 64 << 10]).unwrap();
    assert!(place_in(dir, text, 1 << 40).is_ok());
}

/// Found by a review: under `ulimit -f` the kernel ended the run with
/// SIGXFSZ, nothing said, an empty file left.
#[test]
fn a_file_past_the_file_size_limit_is_refused_before_it_is_made() {
    use super::space::check_size_limit;
    let path = Path::new("f.img");
    let written = Use {
        needed: 8 << 20,
        writes: true,
        writes_data: true,
        ..Use::default()
    };
    let made = Growth {
        existing: None,
        size: Some(8 << 20),
        is_default: true,
        grows: 8 << 20,
    };
    let refused = check_size_limit(path, &written, &made, Some(4 << 20));
    assert!(
        matches!(refused, Err(FilesError::FileSizeLimit { reach, limit, .. }) if (reach, limit) == (8 << 20, 4 << 20)),
        "{refused:?}"
    );
    assert!(check_size_limit(path, &written, &made, None).is_ok());
    assert!(check_size_limit(path, &written, &made, Some(8 << 20)).is_ok());
    // A long file only read is not written past the limit: no signal.
    let read = Use {
        needed: 8 << 20,
        ..Use::default()
    };
    let existing = Growth {
        existing: Some(16 << 20),
        size: None,
        is_default: true,
        grows: 0,
    };
    assert!(check_size_limit(path, &read, &existing, Some(4 << 20)).is_ok());
    // Nor is one a sized job only reads, opened to a size it has.
    let sized = Growth {
        size: Some(8 << 20),
        ..existing
    };
    assert!(check_size_limit(path, &read, &sized, Some(4 << 20)).is_ok());
    // Nor one only trimmed: a hole punched past the end grows nothing
    // (found by a review: `rw=randtrim` on a long file was refused).
    let trimmed = Use {
        needed: 8 << 20,
        writes: true,
        ..Use::default()
    };
    assert!(check_size_limit(path, &trimmed, &existing, Some(4 << 20)).is_ok());
}
