//! The parameters read from a source file, by name, each marked when an
//! importer uses it, so the rest can be listed as not modelled.

use super::ImportError;

/// One `name = value` of the source, with its line.
#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub(crate) name: String,
    pub(crate) value: String,
    pub(crate) line: usize,
    used: bool,
}

impl Param {
    pub(crate) fn new(name: &str, value: &str, line: usize) -> Param {
        Param {
            name: name.trim().to_string(),
            value: value.trim().to_string(),
            line,
            used: false,
        }
    }
}

/// A file's parameters (a few dozen: looked up by a scan).
pub(crate) struct Params {
    file: String,
    list: Vec<Param>,
}

impl Params {
    /// The parameters of `file`; one set twice is refused (the simulators
    /// differ on which would count, and the other would be dropped).
    pub(crate) fn new(file: &str, list: Vec<Param>) -> Result<Params, ImportError> {
        for (i, param) in list.iter().enumerate() {
            let earlier = list[..i]
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(&param.name));
            if let Some(first) = earlier {
                return Err(ImportError::Syntax {
                    file: file.to_string(),
                    line: param.line,
                    message: format!(
                        "`{}` is set again (first at line {}); set it once",
                        param.name, first.line
                    ),
                });
            }
        }
        Ok(Params {
            file: file.to_string(),
            list,
        })
    }

    /// The value of `name`, if the file sets it; marks it used.
    pub(crate) fn text(&mut self, name: &str) -> Option<String> {
        let param = self
            .list
            .iter_mut()
            .find(|p| p.name.eq_ignore_ascii_case(name))?;
        param.used = true;
        Some(param.value.clone())
    }

    /// The value of `name`, which the drive cannot do without.
    pub(crate) fn required(&mut self, name: &str) -> Result<String, ImportError> {
        self.text(name)
            .ok_or_else(|| self.missing(name, "the drive's geometry and timing need it"))
    }

    /// `name` is not set and is `needed`.
    pub(crate) fn missing(&self, name: &str, needed: &str) -> ImportError {
        ImportError::Missing {
            file: self.file.clone(),
            name: name.to_string(),
            needed: needed.to_string(),
        }
    }

    pub(crate) fn number(&mut self, name: &str) -> Result<Option<f64>, ImportError> {
        let Some(value) = self.text(name) else {
            return Ok(None);
        };
        match value.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(self.bad(name, &value, "a number of zero or more")),
        }
    }

    pub(crate) fn required_number(&mut self, name: &str) -> Result<f64, ImportError> {
        self.required(name)?;
        Ok(self.number(name)?.expect("present"))
    }

    /// Sets `g`'s channels and dies per channel, then its planes per die,
    /// blocks per plane and pages per block from the parameters `names`.
    pub(crate) fn geometry_into(
        &mut self,
        g: &mut crate::config::Geometry,
        (channels, dies_per_channel): (u32, u32),
        [planes, blocks, pages]: [&str; 3],
    ) -> Result<(), ImportError> {
        g.channels = channels;
        g.dies_per_channel = dies_per_channel;
        g.planes_per_die = self.required_count(planes)?;
        g.blocks_per_plane = self.required_count(blocks)?;
        g.pages_per_block = self.required_count(pages)?;
        Ok(())
    }

    pub(crate) fn required_count(&mut self, name: &str) -> Result<u32, ImportError> {
        self.required(name)?;
        Ok(self.count(name)?.expect("present"))
    }

    /// A whole number from 1 to 2^32 - 1, if the file sets `name` (`2.5`
    /// is refused, not cut to 2).
    pub(crate) fn count(&mut self, name: &str) -> Result<Option<u32>, ImportError> {
        let Some(value) = self.text(name) else {
            return Ok(None);
        };
        // `8` or `8.0`; never a fraction cut or a value wrapped.
        let whole = value.parse::<u32>().ok().or_else(|| {
            let x = value.parse::<f64>().ok()?;
            (x.fract() == 0.0 && (1.0..=f64::from(u32::MAX)).contains(&x)).then_some(x as u32)
        });
        match whole {
            Some(n) if n > 0 => Ok(Some(n)),
            _ => Err(self.bad(name, &value, "a whole number from 1 to 4294967295")),
        }
    }

    pub(crate) fn flag(&mut self, name: &str) -> Result<Option<bool>, ImportError> {
        let Some(value) = self.text(name) else {
            return Ok(None);
        };
        match value.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(Some(true)),
            "false" | "0" => Ok(Some(false)),
            _ => Err(self.bad(name, &value, "true, false, 1 or 0")),
        }
    }

    /// The value of `name` (in any case) as one of `choices`, with the text
    /// as given; an error lists the choices.
    pub(crate) fn choice<T: Copy>(
        &mut self,
        name: &str,
        choices: &[(&str, T)],
    ) -> Result<Option<(String, T)>, ImportError> {
        let Some(value) = self.text(name) else {
            return Ok(None);
        };
        match choices
            .iter()
            .find(|(choice, _)| choice.eq_ignore_ascii_case(&value))
        {
            Some(&(_, chosen)) => Ok(Some((value, chosen))),
            None => {
                let accepted: Vec<&str> = choices.iter().map(|(choice, _)| *choice).collect();
                Err(self.bad(name, &value, &accepted.join(", ")))
            }
        }
    }

    /// `count`, the value of `name`, times `factor`; refused when the
    /// product does not fit 32 bits, since a wrapped product would be a
    /// silently different drive. `unit` says, in the error, what `count`
    /// counts.
    pub(crate) fn product(
        &self,
        name: &str,
        count: u32,
        factor: u32,
        unit: &str,
    ) -> Result<u32, ImportError> {
        count.checked_mul(factor).ok_or_else(|| {
            let most = u32::MAX / factor;
            self.bad(name, &count.to_string(), &format!("at most {most} {unit}"))
        })
    }

    pub(crate) fn bad(&self, name: &str, value: &str, accepted: &str) -> ImportError {
        ImportError::BadValue {
            file: self.file.clone(),
            line: (self.list.iter())
                .find(|p| p.name.eq_ignore_ascii_case(name))
                .map(|p| p.line),
            name: name.to_string(),
            value: value.to_string(),
            accepted: accepted.to_string(),
        }
    }

    /// The parameters no importer used, in file order.
    pub(crate) fn unused(&self) -> impl Iterator<Item = &Param> {
        self.list.iter().filter(|p| !p.used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_is_matched_in_any_case_and_a_wrong_one_lists_the_choices() {
        let mut p = Params::new(
            "d.xml",
            vec![
                Param::new("Suspension", "program_erase", 3),
                Param::new("Policy", "maybe", 4),
            ],
        )
        .unwrap();
        let choices = [("NONE", false), ("PROGRAM_ERASE", true)];
        assert_eq!(
            p.choice("SUSPENSION", &choices).unwrap(),
            Some(("program_erase".to_string(), true))
        );
        assert_eq!(p.choice("Absent", &choices).unwrap(), None);
        let err = p.choice("Policy", &choices).unwrap_err().to_string();
        assert_eq!(
            err,
            "d.xml: line 4: `Policy` = maybe: accepted: NONE, PROGRAM_ERASE"
        );
        assert_eq!(p.unused().count(), 0, "both were read");
    }

    #[test]
    fn a_parameter_set_twice_is_refused_naming_both_lines() {
        let twice = vec![
            Param::new("Page size", "8", 35),
            Param::new("Pages per block", "64", 36),
            Param::new("PAGE SIZE", "16", 40),
        ];
        let err = Params::new("d.parv", twice).err().unwrap().to_string();
        assert_eq!(
            err,
            "d.parv: line 40: `PAGE SIZE` is set again (first at line 35); set it once"
        );
    }
}
