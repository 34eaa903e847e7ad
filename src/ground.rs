//! The ground: exact token counts (`tokens`, public), and text, whole-or-nothing writes,
//! units and the proxy's call log (for the crate's own use).

#[doc(hidden)]
pub mod atomic;
#[doc(hidden)]
pub mod calllog;
#[doc(hidden)]
pub mod text;
pub mod tokens;
#[doc(hidden)]
pub mod units;
