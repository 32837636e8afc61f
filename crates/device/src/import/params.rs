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
    pub(crate) fn new(file: &str, list: Vec<Param>) -> Params {
        Params {
            file: file.to_string(),
            list,
        }
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
        self.text(name).ok_or_else(|| ImportError::Missing {
            file: self.file.clone(),
            name: name.to_string(),
            needed: "the drive's geometry and timing need it".to_string(),
        })
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

    pub(crate) fn required_count(&mut self, name: &str) -> Result<u32, ImportError> {
        let value = self.required(name)?;
        match value.parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(self.bad(name, &value, "a whole number of at least 1")),
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

    pub(crate) fn bad(&self, name: &str, value: &str, accepted: &str) -> ImportError {
        ImportError::BadValue {
            file: self.file.clone(),
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
