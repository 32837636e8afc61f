//! A sweep stopped early (the first Ctrl-C): the runs under way finish, no
//! other starts, and the settings that ran on every seed are judged as a
//! sweep of those settings alone; the report names the others
//! ([`SweepReport::not_run`]), so what hours of runs measured is kept.

use super::*;

impl Sweep {
    /// [`Sweep::run`], starting no run once `keep_going` says no.
    pub fn run_until(
        &self,
        sims: &[Simulation],
        keep_going: &(dyn Fn() -> bool + Sync),
    ) -> Result<SweepReport, SweepError> {
        let started = std::time::Instant::now();
        let runs = self.run_reports_until(sims, keep_going)?;
        let (judged, not_run) = settings_run_on_every_seed(runs, &self.specs);
        if judged.is_empty() {
            return Err(SweepError::StoppedBeforeAnySetting);
        }
        let mut report = self.judge(&judged, &self.objective)?;
        report.not_run = not_run;
        report.wall_s = round(started.elapsed().as_secs_f64(), 3);
        Ok(report)
    }
}

/// Of `runs` (seed by seed, each seed's in `specs` order; `None`: not run),
/// those of the specs that ran on every seed, in the same order, and the
/// specs that did not.
fn settings_run_on_every_seed<T>(runs: Vec<Option<T>>, specs: &[String]) -> (Vec<T>, Vec<String>) {
    let n = specs.len();
    let complete: Vec<bool> = (0..n)
        .map(|s| runs.iter().skip(s).step_by(n).all(Option::is_some))
        .collect();
    let judged = runs
        .into_iter()
        .enumerate()
        .filter(|(i, _)| complete[i % n])
        .filter_map(|(_, run)| run)
        .collect();
    let not_run = specs
        .iter()
        .zip(&complete)
        .filter(|(_, done)| !**done)
        .map(|(spec, _)| spec.clone())
        .collect();
    (judged, not_run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_settings_run_on_every_seed_are_judged() {
        let specs: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        // Two seeds; the stop came after the first seed and b's second run.
        let runs = vec![Some("a1"), Some("b1"), Some("c1"), None, Some("b2"), None];
        let (judged, not_run) = settings_run_on_every_seed(runs, &specs);
        assert_eq!(judged, ["b1", "b2"]);
        assert_eq!(not_run, ["a", "c"]);
        let all = vec![Some(1), Some(2), Some(3)];
        assert_eq!(
            settings_run_on_every_seed(all, &specs),
            (vec![1, 2, 3], vec![])
        );
    }
}
