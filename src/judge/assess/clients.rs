//! The per-client rows derived from the numbers: the definitions each client sends per turn of
//! each server (`schema.rs`), and the totals, labels and texts every output shows (`summary.rs`).

mod schema;
mod summary;

pub use schema::{apply, deferred_names};
pub use summary::{
    client_label, client_totals, cut_text, definitions_text, measured_profiles_text,
    model_tokenizers_text, seen_text, still_cut, ClientTotals, StillCut,
};

#[cfg(test)]
mod tests;
