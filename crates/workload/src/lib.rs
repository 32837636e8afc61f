pub mod chart;
pub mod fio;
pub mod report;
pub mod series;
pub mod trace;
pub mod workload;
