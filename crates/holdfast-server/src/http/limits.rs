//! The per-key request rate limit: a GCRA token bucket per API key (governor's keyed
//! limiter over a sharded map, so the hot path takes no global lock). A key is the
//! authenticated key id (`key:<id>`, `key:env`); a request that fails auth is never
//! counted. Buckets that are full again (idle for at least one burst's worth of time) are
//! evicted at most once a minute, so the map holds only the keys active lately.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota};

/// How often idle buckets are evicted.
const EVICT_EVERY: Duration = Duration::from_secs(60);

/// A sustained rate and a burst, per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests per second a key may keep up.
    pub per_second: NonZeroU32,
    /// Requests a key may make at once after being idle.
    pub burst: NonZeroU32,
}

impl RateLimit {
    /// The limit the flags give: `None` when `per_second` is 0 (off); the burst defaults
    /// to one second's worth.
    pub fn from_flags(per_second: u32, burst: Option<u32>) -> Option<RateLimit> {
        let per_second = NonZeroU32::new(per_second)?;
        let burst = burst.and_then(NonZeroU32::new).unwrap_or(per_second);
        Some(RateLimit { per_second, burst })
    }
}

/// The buckets of every key seen lately.
pub struct KeyLimiter {
    buckets: DefaultKeyedRateLimiter<String>,
    started: Instant,
    /// Seconds since `started` of the last eviction.
    evicted_at_seconds: AtomicU64,
}

impl KeyLimiter {
    pub fn new(limit: RateLimit) -> KeyLimiter {
        let quota = Quota::per_second(limit.per_second).allow_burst(limit.burst);
        KeyLimiter {
            buckets: DefaultKeyedRateLimiter::dashmap(quota),
            started: Instant::now(),
            evicted_at_seconds: AtomicU64::new(0),
        }
    }

    /// Takes one request from `key`'s bucket; when it is empty, the whole seconds (at
    /// least 1) until it holds one again.
    pub fn check(&self, key: &str) -> Result<(), u64> {
        self.evict_idle();
        match self.buckets.check_key(&key.to_owned()) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.buckets.clock().now());
                Err(retry_after_seconds(wait))
            }
        }
    }

    /// How many keys have a bucket now.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Drops the buckets that are full again, at most once per [`EVICT_EVERY`] (one task
    /// wins the turn; the others go on at once).
    fn evict_idle(&self) {
        let now = self.started.elapsed().as_secs();
        let last = self.evicted_at_seconds.load(Ordering::Relaxed);
        if now.saturating_sub(last) < EVICT_EVERY.as_secs() {
            return;
        }
        let won = self
            .evicted_at_seconds
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        if won {
            self.evict_now();
        }
    }

    /// Drops every bucket that is full again.
    pub fn evict_now(&self) {
        self.buckets.retain_recent();
        self.buckets.shrink_to_fit();
    }
}

/// `wait` rounded up to whole seconds, at least 1 (the unit of `Retry-After`).
fn retry_after_seconds(wait: Duration) -> u64 {
    let whole = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    whole.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(per_second: u32, burst: u32) -> RateLimit {
        RateLimit::from_flags(per_second, Some(burst)).unwrap()
    }

    #[test]
    fn zero_turns_it_off_and_the_burst_defaults_to_one_second() {
        assert_eq!(RateLimit::from_flags(0, Some(5)), None);
        let l = RateLimit::from_flags(7, None).unwrap();
        assert_eq!((l.per_second.get(), l.burst.get()), (7, 7));
        let l = RateLimit::from_flags(7, Some(0)).unwrap();
        assert_eq!(l.burst.get(), 7);
    }

    #[test]
    fn a_key_gets_its_burst_then_waits_and_other_keys_are_untouched() {
        let limiter = KeyLimiter::new(limit(1, 3));
        for _ in 0..3 {
            assert_eq!(limiter.check("key:a"), Ok(()));
        }
        assert_eq!(limiter.check("key:a"), Err(1));
        assert_eq!(limiter.check("key:b"), Ok(()));
        assert_eq!(limiter.len(), 2);
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up_and_never_zero() {
        assert_eq!(retry_after_seconds(Duration::ZERO), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(10)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1000)), 1);
        assert_eq!(retry_after_seconds(Duration::from_millis(1001)), 2);
        let limiter = KeyLimiter::new(limit(1, 1));
        assert_eq!(limiter.check("k"), Ok(()));
        // One per second, just used: the next one is about a second away.
        assert_eq!(limiter.check("k"), Err(1));
    }

    #[test]
    fn full_buckets_are_evicted() {
        let limiter = KeyLimiter::new(limit(1000, 1));
        assert_eq!(limiter.check("idle"), Ok(()));
        std::thread::sleep(Duration::from_millis(20));
        limiter.evict_now();
        assert!(limiter.is_empty(), "{} buckets left", limiter.len());
    }
}
