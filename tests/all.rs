//! One test binary gathering every suite (faster to link than one binary per file).

mod common;
mod suite;
