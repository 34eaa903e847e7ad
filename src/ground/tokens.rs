//! Token counting: exact BPE counters (cl100k_base, o200k_base: `bpe` over the embedded
//! `tables`, pre-tokenised by `pieces`, long pieces by `backtrack`,
//! both on the merge loop of `merge`), the places a text can be cut without changing its
//! count (`cuts`), the labelled Claude estimate, and the image cost model. Everything that
//! turns text or pixels into a token number lives here.

mod ascii;
mod backtrack;
mod bpe;
mod counter;
pub mod cuts;
mod image;
mod index;
mod merge;
#[cfg(test)]
mod oracle_tests;
mod packed;
mod pieces;
mod tables;

pub use bpe::Encoding;
pub use counter::{
    Counts, Tokenizer, TokenizerError, TokenizerList, TokenizerSet, DEFAULT_CLAUDE_FACTOR,
};
pub use image::{
    claude_image_tokens, decode_image, image_data_cost, image_dimensions, ImageFormat, ImageInfo,
};
