use iosteer_fuzz::{fuzz, text_seeds, Outcome};
use iosteer_study::sweep::{expand_grid, parse_seeds, MAX_POINTS};

#[test]
fn sweep_grids() {
    let seeds = text_seeds(&[
        "netflix:write.limiter=bandwidth,write.current=10000..20000/10000",
        "netflix:write.limiter=bandwidth,write.current=5000,10000,20000,40000,80000,160000",
        "netflix:read_bias=0..200/50,write.current=1,2,4",
        "fifo",
        "kyber:read_lat_nsec=1000000..4000000/1000000,write_lat_nsec=5000000,10000000",
    ]);
    fuzz("sweep-grid", &seeds, |bytes| {
        let grid = String::from_utf8_lossy(bytes);
        let Ok(specs) = expand_grid(&grid) else {
            return Outcome::Refused;
        };
        let name = grid.split_once(':').map_or(&*grid, |(n, _)| n).trim();
        if specs.is_empty() || specs.len() > MAX_POINTS {
            return Outcome::Violation(format!("{} specs", specs.len()));
        }
        match specs.iter().find(|s| !s.starts_with(name)) {
            Some(s) => Outcome::Violation(format!("spec {s:?} lost the policy {name:?}")),
            None => Outcome::Accepted,
        }
    });
}

#[test]
fn sweep_seed_lists() {
    let seeds = text_seeds(&["1", "1..8", "1,2,3", "0..0", "18446744073709551615"]);
    fuzz("sweep-seeds", &seeds, |bytes| {
        match parse_seeds(&String::from_utf8_lossy(bytes)) {
            Ok(list) if list.is_empty() => Outcome::Violation("no seeds".into()),
            Ok(_) => Outcome::Accepted,
            Err(_) => Outcome::Refused,
        }
    });
}
