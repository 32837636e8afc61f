use super::*;

#[test]
fn numbers_too_long_to_read_are_shown_in_scientific_notation() {
    assert_eq!(readable(&1e-300.to_string()), "1e-300");
    assert_eq!(readable(&(-1e300).to_string()), "-1e300");
    assert_eq!(readable(&u64::MAX.to_string()), "18446744073709551615");
    assert_eq!(readable("0.5"), "0.5");
    assert_eq!(readable("a name"), "a name");
    let mut drive = DeviceConfig::preset("consumer-sata").unwrap();
    drive.over_provisioning = 1e-300;
    let e = drive.validate().unwrap_err().to_string();
    assert!(e.starts_with("`over_provisioning` = 1e-300:"), "{e}");
}

#[test]
fn a_cache_larger_than_the_drive_or_a_plane_slower_than_a_second_is_refused() {
    let mut drive = DeviceConfig::preset("consumer-sata").unwrap();
    drive.cache.size_mib = u64::MAX;
    let e = drive.validate().unwrap_err().to_string();
    assert!(e.contains("`cache.size_mib` = 18446744073709551615"), "{e}");
    let mut drive = DeviceConfig::preset("consumer-sata").unwrap();
    drive.multi_plane.extra_us_per_plane = 1e297;
    let e = drive.validate().unwrap_err().to_string();
    assert!(e.contains("multi_plane.extra_us_per_plane"), "{e}");
}

#[test]
fn every_preset_is_valid_and_round_trips_through_toml() {
    for name in preset_names() {
        let config = DeviceConfig::preset(name).unwrap();
        config.validate().unwrap();
        let again = DeviceConfig::from_toml(&config.to_toml(), "x.toml").unwrap();
        assert_eq!(config, again, "{name}");
    }
}

#[test]
fn geometry_and_costs_are_bounded_naming_the_field_and_range() {
    let check = |edit: fn(&mut DeviceConfig), field: &str, range: &str| {
        let mut c = consumer_sata();
        edit(&mut c);
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains(field) && e.contains(range), "{field}: {e}");
    };
    // 15 GB of maps: 2^31 pages.
    check(
        |c| c.geometry.blocks_per_plane = 1 << 20,
        "geometry",
        "2^22",
    );
    check(
        |c| {
            c.geometry.blocks_per_plane = 1 << 17;
            c.geometry.pages_per_block = 1 << 14;
        },
        "geometry",
        "2^28",
    );
    check(|c| c.geometry.page_size = 100, "page_size", "512");
    check(
        |c| c.trim_cost.size_exponent = 1e308,
        "size_exponent",
        "from 0 to 2",
    );
    check(
        |c| c.trim_cost.per_mib_us = 9e6,
        "trim_cost",
        "at most 600 s",
    );
    check(|c| c.timing.block_erase_us = 1e12, "block_erase_us", "10 s");
    check(|c| c.flush_us = f64::NAN, "flush_us", "from 0 to");
    // A write waited 1e15 us for its page; at 1e17 the clock saturated
    // and the request was lost from the report.
    check(|c| c.ftl.buffer_flush_us = 1e15, "buffer_flush_us", "10 s");
    // A host write went ahead with no erased block (10 MB/s of writes on
    // a drive whose dies program 3 MB/s, their GC never paid).
    check(|c| c.gc.state3_below = 0, "state3_below", "at least 1");
    // A drive of 2 KiB pages without an [ftl] section.
    check(
        |c| {
            c.geometry.page_size = 2048;
            c.ftl.mapping_unit = 4096;
        },
        "mapping_unit",
        "the default when the file sets none; `mapping_unit = 2048`",
    );
    check(
        |c| c.timing.host_link_mb_per_s = 1e-9,
        "host_link_mb_per_s",
        "from 1 to",
    );
    check(
        |c| c.gc.background_idle_ms = 1e300,
        "background_idle_ms",
        "an hour",
    );
}

#[test]
fn preset_capacities_stay_small() {
    for name in preset_names() {
        let gib = DeviceConfig::preset(name)
            .unwrap()
            .geometry
            .physical_bytes()
            >> 30;
        assert!((1..=64).contains(&gib), "{name}: {gib} GiB");
    }
}

#[test]
fn errors_name_the_file_the_field_and_what_is_accepted() {
    let err = DeviceConfig::preset("hdd").unwrap_err().to_string();
    assert!(
        err.contains("consumer-sata, enterprise-nvme, diskSim-slc"),
        "{err}"
    );

    let err = error_reading(&consumer_sata_with(&[(
        "victim = \"greedy\"",
        "victim = \"oldest\"",
    )]));
    assert!(
        err.starts_with("drive.toml") && err.contains("greedy") && err.contains("line"),
        "{err}"
    );

    let err = error_reading(&consumer_sata_with(&[("channels = 8", "channels = 0")]));
    assert!(
        err.contains("geometry.channels") && err.contains("at least 1"),
        "{err}"
    );

    let err = error_reading(&consumer_sata_with(&[(
        "over_provisioning = 0.07",
        "over_provisioning = 0.01",
    )]));
    assert!(err.contains("over_provisioning"), "{err}");

    let err = error_reading(&consumer_sata_with(&[
        ("channels = 8", "channels = 65536"),
        ("dies_per_channel = 1", "dies_per_channel = 65536"),
    ]));
    assert!(err.contains("4096 dies"), "{err}");
    let text = consumer_sata_with(&[("high_watermark = 48", "high_watermark = 4294967294")]);
    assert!(DeviceConfig::from_toml(&text, "drive.toml").is_err());

    let err = error_reading(&(consumer_sata().to_toml() + "\nturbo = true\n"));
    assert!(err.contains("turbo"), "{err}");
}

/// consumer-sata as TOML, with each `(from, to)` replaced.
fn consumer_sata_with(edits: &[(&str, &str)]) -> String {
    edits
        .iter()
        .fold(consumer_sata().to_toml(), |text, (from, to)| {
            text.replace(from, to)
        })
}

/// What reading `text` as `drive.toml` fails with.
fn error_reading(text: &str) -> String {
    DeviceConfig::from_toml(text, "drive.toml")
        .unwrap_err()
        .to_string()
}

#[test]
fn trim_cost_grows_with_ranges_and_size() {
    let cost = consumer_sata().trim_cost;
    assert_eq!(cost.micros(1, 0), 2100.0);
    assert!(cost.micros(64, 64 << 20) > 20_000.0);
}

#[test]
fn a_drive_whose_maps_would_not_fit_in_memory_is_refused_by_its_units_not_its_pages() {
    // 2 TiB of 16 KiB pages (2^27 pages, within the page bound) mapped by
    // 512-byte sectors: 2^32 units, 32 GiB of maps. A quarter of it, 2^30
    // units, was accepted, and a run died allocating its 8 GiB maps.
    let mut c = consumer_sata();
    c.geometry.blocks_per_plane = 1 << 15;
    c.ftl.mapping_unit = 512;
    assert!(c.geometry.physical_pages() <= MAX_PHYSICAL_PAGES);
    let e = c.validate().unwrap_err().to_string();
    assert!(
        e.starts_with("`geometry` = 4294967296:")
            && e.contains("2^28")
            && e.contains("32.0 GiB of memory")
            && e.contains("ftl.mapping_unit"),
        "{e}"
    );
    // The same drive mapped by page, and 4 KiB units on half of it, fit.
    c.ftl.mapping_unit = c.geometry.page_size;
    c.trim_cost.per_mib_us = 0.0;
    c.validate().unwrap();
    c.geometry.blocks_per_plane = 1 << 14;
    c.ftl.mapping_unit = 4096;
    c.validate().unwrap();
    c.geometry.blocks_per_plane += 1;
    assert!(c.validate().is_err(), "2^28 units and a block more");
}

#[test]
fn timings_no_nand_shows_are_said_and_the_presets_and_family_have_none() {
    for (name, _) in PRESETS {
        assert!(
            DeviceConfig::preset(name).unwrap().implausible().is_empty(),
            "{name}"
        );
    }
    for seed in 1..=300 {
        let drive = crate::family::random_drive(seed);
        assert!(
            drive.implausible().is_empty(),
            "family:{seed}: {:?}",
            drive.implausible()
        );
    }
    // Found by a review: zero times and a program 250 times faster than a
    // read were taken without a word.
    let mut odd = DeviceConfig::preset("diskSim-slc").unwrap();
    odd.timing.page_read_us = 0.0;
    assert_eq!(odd.implausible().len(), 1, "{:?}", odd.implausible());
    odd.timing.page_read_us = 250.0;
    odd.timing.page_program_us = 1.0;
    let said = odd.implausible();
    assert!(
        said[0].contains("page_program_us (1 us) not above page_read_us"),
        "{said:?}"
    );
    assert!(odd.to_toml().starts_with("# note: timing.page_program_us"));
    // Found by a review: a program as fast as a read (75 us both, in files
    // MQSim ships), 100,000 NCQ tags, and erase suspension a blocking GC
    // never uses were taken without a word.
    odd.timing.page_read_us = 75.0;
    odd.timing.page_program_us = 75.0;
    odd.interface.kind = InterfaceKind::Sata;
    odd.interface.queue_depth = 100_000;
    odd.gc.suspend = true;
    let said = odd.implausible();
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(said[0].contains("(75 us) not above"), "{said:?}");
    assert!(said[1].contains("NCQ has 32 tags"), "{said:?}");
    assert!(
        said[2].starts_with("gc.suspend = true has no effect"),
        "{said:?}"
    );
    // Multi-plane on a die of one plane did nothing, silently.
    odd.multi_plane.enabled = true;
    odd.geometry.planes_per_die = 1;
    let said = odd.implausible();
    assert!(
        said[3].starts_with("multi_plane.enabled = true has no effect"),
        "{said:?}"
    );
}

/// Found by a review: `over_provisioning = 0.99999999` loaded as a drive
/// of 0 bytes, and a trace fitted to it read as 50,000 IOPS of nothing.
#[test]
fn a_drive_without_a_logical_page_is_refused() {
    let mut drive = DeviceConfig::preset("consumer-sata").unwrap();
    drive.over_provisioning = 0.999_999_99;
    let e = drive.validate().unwrap_err().to_string();
    assert!(e.contains("no logical page"), "{e}");
    drive.over_provisioning = 0.999;
    drive.validate().unwrap();
}
