//! What a family sweep prints and draws: a line per drive as it runs,
//! the table, and the chart of ratios.

use super::*;

/// One line of a drive's results (as [`FamilySweep::run`] reports them):
/// per objective, the best static rate and each setting's rate, ratio and
/// seeds met.
pub fn drive_line(results: &[DriveResult]) -> String {
    let Some(first) = results.first() else {
        return String::new();
    };
    let parts: Vec<String> = results
        .iter()
        .flat_map(|d| {
            let best = d
                .best_static_mbps
                .map_or("none".into(), |b| format!("{b:.1}"));
            d.settings.iter().map(move |s| {
                let ratio = s.ratio.map_or("-".into(), |r| format!("{r:.2}x"));
                format!(
                    "{} {:.1} MB/s (static {best}) {ratio} met {}/{} worst {:.2}",
                    s.spec, s.write_mbps, s.seeds_met, s.seeds, s.worst_over_bound
                )
            })
        })
        .collect();
    format!("{}: {}", first.drive, parts.join(" | "))
}

/// The terminal table: per objective, a row per drive, then the aggregate.
pub fn table(report: &FamilyReport) -> String {
    let seeds: Vec<String> = report.seeds.iter().map(u64::to_string).collect();
    let mut out = format!(
        "family sweep of {} on {} drive(s), seeds {}, phase {}; static grid: {} limits per drive \
         (halvings from {:.0}% of the link, on down to {} kB/s until one meets), refined by {} \
         quarter-doublings above the best\n",
        report.scenario,
        report.objectives.first().map_or(0, |o| o.drives.len()),
        seeds.join(","),
        report.phase,
        report.static_points,
        STATIC_TOP * 100.0,
        STATIC_FLOOR,
        REFINE,
    );
    let run = report.objectives.first().map_or(0, |o| o.drives.len());
    if run < report.drives_asked {
        let asked = report.drives_asked;
        out += &format!("stopped after {run} of {asked} drives: the figures cover those\n");
    }
    for o in &report.objectives {
        out += &format!("\nobjective: {}\n", o.objective);
        out += &format!(
            "  {:<18} {:>6} {:>11}  {:<34} {:>10} {:>6} {:>5}  {}\n",
            "drive", "link", "static MB/s", "setting", "write MB/s", "ratio", "met", "worst/bound"
        );
        for d in &o.drives {
            let best = d.best_static_mbps.map_or("none".to_string(), |b| {
                format!("{b:.1}{}", if d.best_static_at_top { "^" } else { "" })
            });
            for s in &d.settings {
                let ratio = s.ratio.map_or("-".to_string(), |r| format!("{r:.2}"));
                out += &format!(
                    "  {:<18} {:>6.0} {:>11}  {:<34} {:>10.1} {:>6} {:>2}/{:<2}  {:.2}\n",
                    d.drive,
                    d.link_mb_per_s,
                    best,
                    s.spec,
                    s.write_mbps,
                    ratio,
                    s.seeds_met,
                    s.seeds,
                    s.worst_over_bound
                );
            }
        }
        for a in &o.settings {
            let median = |m: Option<f64>| m.map_or("-".into(), |m| format!("{m:.2}"));
            out += &format!(
                "  {}: met on {}/{} (drive, seed) pairs ({:.1}%); median write ratio to the best static limit {} over {} drive(s), {} over the {} where it met on every seed\n",
                a.spec,
                a.pairs_met,
                a.pairs,
                a.share_met * 100.0,
                median(a.median_ratio),
                a.drives_with_ratio,
                median(a.median_ratio_met),
                a.drives_met_with_ratio
            );
            let worst: Vec<String> = a
                .worst_pairs
                .iter()
                .map(|(d, s, o)| format!("{d} seed {s} {o:.2}"))
                .collect();
            let worst = if worst.is_empty() {
                "none".into()
            } else {
                worst.join("; ")
            };
            out += &format!("    furthest over the bound: {worst}\n");
            let lowest: Vec<String> = a
                .lowest_ratios
                .iter()
                .map(|(d, r)| format!("{d} {r:.2}"))
                .collect();
            out += &format!("    lowest ratios: {}\n", lowest.join("; "));
        }
    }
    out += &notes(report);
    out += "  (static MB/s: the best static limit meeting the objective on every seed, mean over \
            the seeds; ^: the grid's top, the fill never held back; none: no limit down to the \
            floor meets)\n";
    out
}

/// The settings' notes on every drive, a kind once (a setting judged by
/// several objectives ran once: its notes count once).
fn notes(report: &FamilyReport) -> String {
    let mut owners: Vec<(String, &[String])> = Vec::new();
    for d in report.objectives.iter().flat_map(|o| &o.drives) {
        for s in &d.settings {
            let name = format!("{} {}", d.drive, s.spec);
            if !owners.iter().any(|(n, _)| *n == name) {
                owners.push((name, &s.notes));
            }
        }
    }
    let owned = owners.iter().map(|(name, notes)| (name.as_str(), *notes));
    crate::sweep::notes_by_kind(owned, owners.len(), "drive's setting")
}

/// A chart of each setting's ratio to the best static limit, per drive.
/// Drives on which no static limit down to the floor meets some objective have
/// no ratio there and are left out (the table lists them).
pub fn chart(path: &Path, report: &FamilyReport) -> Result<(), OutputError> {
    let Some(first) = report.objectives.first() else {
        return Ok(());
    };
    let charted: Vec<usize> = (0..first.drives.len())
        .filter(|&d| {
            report
                .objectives
                .iter()
                .all(|o| o.drives[d].settings.iter().all(|s| s.ratio.is_some()))
        })
        .collect();
    let categories: Vec<String> = charted
        .iter()
        .map(|&d| {
            let name = &first.drives[d].drive;
            name.split(' ')
                .next()
                .unwrap_or_default()
                .replace("family:", "")
        })
        .collect();
    let lines: Vec<(String, Vec<f64>)> = report
        .objectives
        .iter()
        .flat_map(|o| {
            let charted = &charted;
            o.settings.iter().enumerate().map(move |(i, a)| {
                let ratios = charted
                    .iter()
                    .filter_map(|&d| o.drives[d].settings[i].ratio)
                    .collect();
                (format!("{} ({})", a.spec, o.objective), ratios)
            })
        })
        .collect();
    category_chart(
        path,
        &format!(
            "{}: write rate over the best static limit meeting the objective, per drive",
            report.scenario
        ),
        &categories,
        "write ratio to the best static limit",
        &lines,
    )
}
