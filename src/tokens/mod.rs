//! Token counting: exact BPE counters (cl100k_base, o200k_base), the labelled Claude estimate,
//! and the image cost model. Everything that turns text or pixels into a token number lives here.

mod counter;
mod image;

pub use counter::{Counts, Tokenizer, TokenizerError, TokenizerSet, DEFAULT_CLAUDE_FACTOR};
pub use image::{
    claude_image_tokens, decode_image, image_data_cost, image_dimensions, ImageFormat, ImageInfo,
};
