//! What `proxy --listen` holds against slow and many clients: a cap on open connections, a
//! time limit on a request's headers (hyper's) and on its body, and a bound on the memory
//! request bodies take. Every connection may hold [`FREE_BODY_BYTES`] of a body; bodies larger
//! than that share a pool of [`BODY_POOL_BYTES`], and one that finds the pool empty is refused
//! at once (503), so a flood of unfinished large bodies costs at most the pool while small
//! requests are still served.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Defaults of the listener's limits (`--max-connections`, `--header-timeout-secs`,
/// `--body-timeout-secs`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
pub const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 10;
pub const DEFAULT_BODY_TIMEOUT_SECS: u64 = 30;

/// The largest request body read (rmcp is given the same limit, its default).
pub(super) const MAX_BODY: usize = 4 * 1024 * 1024;
/// Bytes of a body any connection may hold without asking the pool.
pub(super) const FREE_BODY_BYTES: usize = 64 * 1024;
/// The bytes all bodies larger than [`FREE_BODY_BYTES`] share at once.
pub(super) const BODY_POOL_BYTES: usize = 32 * 1024 * 1024;
/// The pool's unit.
const UNIT: usize = 64 * 1024;

/// How long the accept loop waits after `accept` fails (at the open-file limit it fails at
/// once, again and again, until a connection closes).
pub(super) const ACCEPT_PAUSE: Duration = Duration::from_millis(250);

/// The listener's limits against slow and many clients.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Connections open at once; more wait in the kernel's queue until one closes.
    pub max_connections: usize,
    /// A request's headers must arrive within this (an idle kept-alive connection is closed
    /// after it too).
    pub header_timeout: Duration,
    /// A request's body must arrive within this once its headers have.
    pub body_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECS),
            body_timeout: Duration::from_secs(DEFAULT_BODY_TIMEOUT_SECS),
        }
    }
}

/// Why a body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyRefused {
    /// Over [`MAX_BODY`].
    TooLarge,
    /// Larger than [`FREE_BODY_BYTES`] while the pool is taken by other bodies.
    Busy,
    /// Not all there within the body timeout.
    Slow,
    /// The connection broke off in the middle.
    CutOff,
}

impl BodyRefused {
    pub(super) fn status(self) -> hyper::StatusCode {
        match self {
            BodyRefused::TooLarge => hyper::StatusCode::PAYLOAD_TOO_LARGE,
            BodyRefused::Busy => hyper::StatusCode::SERVICE_UNAVAILABLE,
            BodyRefused::Slow => hyper::StatusCode::REQUEST_TIMEOUT,
            BodyRefused::CutOff => hyper::StatusCode::BAD_REQUEST,
        }
    }

    pub(super) fn text(self) -> &'static str {
        match self {
            BodyRefused::TooLarge => "request body over 4 MiB\n",
            BodyRefused::Busy => {
                "too many large request bodies are being read at once; try again\n"
            }
            BodyRefused::Slow => "request body not received in time (--body-timeout-secs)\n",
            BodyRefused::CutOff => "request body cut off\n",
        }
    }
}

/// The pool the bodies larger than [`FREE_BODY_BYTES`] share.
#[derive(Debug, Clone)]
pub(super) struct BodyPool(Arc<Semaphore>);

impl Default for BodyPool {
    fn default() -> Self {
        BodyPool(Arc::new(Semaphore::new(BODY_POOL_BYTES / UNIT)))
    }
}

/// A body read whole, and its share of the pool (held until the request is answered).
pub(super) type ReadBody = (Bytes, Option<OwnedSemaphorePermit>);

impl BodyPool {
    /// Read `body` whole within `timeout`, at most [`MAX_BODY`], the bytes past
    /// [`FREE_BODY_BYTES`] taken from the pool as they arrive.
    pub(super) async fn read<B>(&self, body: B, timeout: Duration) -> Result<ReadBody, BodyRefused>
    where
        B: hyper::body::Body<Data = Bytes> + Unpin,
    {
        tokio::time::timeout(timeout, self.read_all(body))
            .await
            .unwrap_or(Err(BodyRefused::Slow))
    }

    async fn read_all<B>(&self, mut body: B) -> Result<ReadBody, BodyRefused>
    where
        B: hyper::body::Body<Data = Bytes> + Unpin,
    {
        let mut out = BytesMut::new();
        let mut held: Option<OwnedSemaphorePermit> = None;
        // a body of known length gets its whole share at once, or is refused before it is read
        if let Some(length) = hyper::body::Body::size_hint(&body).exact() {
            let length = usize::try_from(length).unwrap_or(usize::MAX);
            if length > MAX_BODY {
                return Err(BodyRefused::TooLarge);
            }
            held = self.take(length, None)?;
            out.reserve(length);
        }
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| BodyRefused::CutOff)?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if out.len() + data.len() > MAX_BODY {
                return Err(BodyRefused::TooLarge);
            }
            held = self.take(out.len() + data.len(), held)?;
            out.extend_from_slice(&data);
        }
        Ok((out.freeze(), held))
    }

    /// The share of the pool a body of `bytes` needs, given what it `held` so far.
    fn take(
        &self,
        bytes: usize,
        held: Option<OwnedSemaphorePermit>,
    ) -> Result<Option<OwnedSemaphorePermit>, BodyRefused> {
        let units = bytes.saturating_sub(FREE_BODY_BYTES).div_ceil(UNIT);
        let have = held.as_ref().map_or(0, |p| p.num_permits());
        if units <= have {
            return Ok(held);
        }
        let more = self
            .0
            .clone()
            .try_acquire_many_owned(u32::try_from(units - have).unwrap_or(u32::MAX))
            .map_err(|_| BodyRefused::Busy)?;
        Ok(Some(match held {
            Some(mut p) => {
                p.merge(more);
                p
            }
            None => more,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::Full;

    fn run<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn small_bodies_are_free_and_large_ones_share_the_pool() {
        run(async {
            let pool = BodyPool::default();
            let t = Duration::from_secs(5);
            let (small, permit) = pool
                .read(Full::new(Bytes::from(vec![1u8; 1000])), t)
                .await
                .unwrap();
            assert_eq!((small.len(), permit.is_none()), (1000, true));
            // eight 4 MiB bodies fill the 32 MiB pool; a ninth is refused while they are held
            let mut held = Vec::new();
            for _ in 0..8 {
                let body = Full::new(Bytes::from(vec![0u8; MAX_BODY]));
                held.push(pool.read(body, t).await.unwrap());
            }
            let ninth = pool
                .read(Full::new(Bytes::from(vec![0u8; MAX_BODY])), t)
                .await;
            assert_eq!(ninth.unwrap_err(), BodyRefused::Busy);
            let small = pool
                .read(Full::new(Bytes::from(vec![0u8; FREE_BODY_BYTES])), t)
                .await;
            assert!(small.is_ok(), "a small body needs no pool");
            held.clear();
            assert!(pool
                .read(Full::new(Bytes::from(vec![0u8; MAX_BODY])), t)
                .await
                .is_ok());
            let over = pool
                .read(Full::new(Bytes::from(vec![0u8; MAX_BODY + 1])), t)
                .await;
            assert_eq!(over.unwrap_err(), BodyRefused::TooLarge);
        });
    }
}
