//! The real coding clients in the lab (installed by .ci/run into target/lab-clients).
