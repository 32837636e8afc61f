//! fio's rate options: `rate`, `rate_iops` and their floors `rate_min`,
//! `rate_iops_min`, per direction, checked together as fio 3.33 checks
//! them before it starts a job.

use super::*;

impl Reader {
    /// Reads `setting` if it is a rate option (`Ok(false)` if not); a
    /// blank or 0 direction is uncapped, as in fio.
    pub(super) fn rate_option(
        &mut self,
        job: &str,
        setting: &Setting,
        notes: &mut Vec<String>,
    ) -> Result<bool, String> {
        let Setting {
            key,
            value,
            line,
            kb_base: base,
            ..
        } = *setting;
        let bad = |expected: &str| setting.bad(expected);
        match key {
            "rate" => {
                let rates = per_direction(value, |t| size_in(t, base).map(|b| (b > 0).then_some(b)))
                    .ok_or_else(|| {
                        bad("bytes per second, such as 30m, or read,write,trim rates (0 uncapped, a blank one as it was)")
                    })?;
                set_directions(&mut self.rate, rates);
            }
            "rate_iops" | "rate_iops_min" => {
                let rates = per_direction(value, |t| {
                    let r = t.parse::<f64>().ok().filter(|r| *r >= 0.0 && r.is_finite())?;
                    Some((r > 0.0).then_some(r))
                })
                .ok_or_else(|| {
                    bad("requests per second, or read,write,trim rates (0 none, a blank one as it was)")
                })?;
                match key {
                    "rate_iops" => set_directions(&mut self.rate_iops, rates),
                    _ => set_directions(&mut self.shape.rate_iops_min, rates),
                }
            }
            "rate_cycle" => {
                let _: u32 = value
                    .parse()
                    .map_err(|_| bad("milliseconds, a whole number"))?;
                notes.push(format!(
                    "job {job}: rate_cycle={value}: rate_min and rate_iops_min are judged over the job's whole run here, not over each rate_cycle"
                ));
            }
            "rate_min" => {
                let floors = per_direction(value, |t| size_in(t, base).map(|b| (b > 0).then_some(b as f64)))
                    .ok_or_else(|| {
                        bad("bytes per second, such as 10m, or read,write,trim floors (0 none, a blank one as it was)")
                    })?;
                set_directions(&mut self.shape.rate_min, floors);
            }
            _ => return Ok(false),
        }
        self.rate_line = Some(line);
        Ok(true)
    }

    /// fio 3.33 refuses, before it starts the job, a direction capped by
    /// both `rate` and `rate_iops` (or both floors: "rate and rate_iops are
    /// mutually exclusive"), and a floor above its cap ("minimum rate
    /// exceeds rate"); the error is at the last rate option's line.
    pub(super) fn check_rates(&self) -> Result<(), (usize, String)> {
        let line = self.rate_line.unwrap_or_default();
        for d in 0..3 {
            let both = (self.rate[d].is_some() && self.rate_iops[d].is_some())
                || (self.shape.rate_min[d].is_some() && self.shape.rate_iops_min[d].is_some());
            if both {
                return Err((line, "rate and rate_iops (or rate_min and rate_iops_min) cap the same direction: fio refuses them together (\"mutually exclusive\"); give one".into()));
            }
            let above =
                |cap: Option<f64>, floor: Option<f64>| cap.zip(floor).is_some_and(|(c, f)| f > c);
            if above(self.rate[d].map(|r| r as f64), self.shape.rate_min[d])
                || above(self.rate_iops[d], self.shape.rate_iops_min[d])
            {
                return Err((line, "a minimum rate above its rate: fio refuses the job (\"minimum rate exceeds rate\")".into()));
            }
        }
        Ok(())
    }
}
