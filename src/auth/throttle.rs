//! Login throttling. Only failed sign-ins count, per account (the email
//! tried) and per client address, each in a fixed window that starts at the
//! first failure: once a key has reached its limit, every attempt with it is
//! refused — even with the right password — until its window has passed.
//! A team behind one NAT signing in correctly is therefore never throttled.
//!
//! What a flood of sign-ins can make baton hold is bounded: at most
//! `tracked` accounts and addresses are counted, and an IPv6 address counts
//! by its /64, the block a single host is usually given. When the count is
//! full, windows that have passed go first, then the oldest of those still
//! below their limit. A window that has reached its limit stays until it
//! ends, whatever else comes: otherwise a flood of other names would give a
//! locked-out account its tries back. Should every window be at its limit
//! (a flood that failed `tracked` names to their limits), a sign-in that
//! needs a new one is refused until the first of them ends: a sign-in
//! baton could not count would be a try without a limit.
//!
//! The counts live in this process. Behind a load balancer with N instances
//! an attacker gets up to N times the limit; the limits are settings.
//!
//! (`governor`, the usual rate-limit crate, counts every request it is asked
//! about and cannot ask "is this key refused?" without spending a cell;
//! counting only failures needs the few lines below.)

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct ThrottleLimits {
    /// Failures an account may have in a window.
    pub per_account: u32,
    /// Failures one client address may have in a window.
    pub per_address: u32,
    pub window: Duration,
    /// Most accounts and addresses counted at once.
    pub tracked: usize,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum Key {
    Account(String),
    Address(IpAddr),
}

#[derive(Clone, Copy, Debug)]
struct Window {
    started: Instant,
    failures: u32,
    /// Attempts being checked right now. They count against the limit too:
    /// otherwise a flood sent all at once would pass the check before its
    /// first failure is counted, and every attempt would reach argon2.
    in_flight: u32,
}

/// Refused: try again after this long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryAfter(pub Duration);

pub struct LoginThrottle {
    limits: ThrottleLimits,
    windows: Mutex<HashMap<Key, Window>>,
}

/// A sign-in let through [`LoginThrottle::begin`]; say how it ended. Dropped
/// without a word (the request failed otherwise), it counts as nothing.
pub struct Attempt<'a> {
    throttle: &'a LoginThrottle,
    keys: Vec<(Key, u32)>,
    settled: bool,
}

impl Attempt<'_> {
    /// Wrong password or unknown account: counts against both keys.
    pub fn failed(mut self) {
        self.settle(|w| w.failures += 1);
    }

    /// A correct sign-in clears the account's failures (not the address's).
    pub fn succeeded(mut self) {
        self.settle(|_| {});
        let mut windows = self.throttle.lock();
        windows.remove(&self.keys[0].0);
    }

    fn settle(&mut self, outcome: impl Fn(&mut Window)) {
        self.settled = true;
        let mut windows = self.throttle.lock();
        for (key, _) in &self.keys {
            if let Some(w) = windows.get_mut(key) {
                w.in_flight = w.in_flight.saturating_sub(1);
                outcome(w);
            }
        }
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.settle(|_| {});
        }
    }
}

impl LoginThrottle {
    pub fn new(limits: ThrottleLimits) -> LoginThrottle {
        LoginThrottle {
            limits,
            windows: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Window>> {
        self.windows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lets a sign-in for `account` from `address` be tried, or refuses it
    /// while either has used up its window.
    pub fn begin(&self, account: &str, address: Option<IpAddr>) -> Result<Attempt<'_>, RetryAfter> {
        let now = Instant::now();
        let window = self.limits.window;
        let keys = self.keys(account, address);
        let mut windows = self.lock();
        let new_keys = keys
            .iter()
            .filter(|(k, _)| !windows.contains_key(k))
            .count();
        if windows.len() + new_keys > self.limits.tracked {
            self.make_room(&mut windows, now, new_keys)?;
        }
        let mut wait = Duration::ZERO;
        for (key, limit) in &keys {
            let Some(w) = windows.get_mut(key) else {
                continue;
            };
            if now - w.started >= window {
                w.started = now;
                w.failures = 0;
            }
            if w.failures >= *limit {
                wait = wait.max(window - (now - w.started));
            } else if w.failures + w.in_flight >= *limit {
                // Refused only for the attempts under way: soon decided.
                wait = wait.max(Duration::from_secs(1));
            }
        }
        if !wait.is_zero() {
            return Err(RetryAfter(wait));
        }
        for (key, _) in &keys {
            let w = windows.entry(key.clone()).or_insert(Window {
                started: now,
                failures: 0,
                in_flight: 0,
            });
            w.in_flight += 1;
        }
        drop(windows);
        Ok(Attempt {
            throttle: self,
            keys,
            settled: false,
        })
    }

    /// The failures `key` may have in a window.
    fn limit_of(&self, key: &Key) -> u32 {
        match key {
            Key::Account(_) => self.limits.per_account,
            Key::Address(_) => self.limits.per_address,
        }
    }

    /// Frees room for `new_keys` more windows: windows that have passed go
    /// first; then, if still too many, the oldest below their limit, down to
    /// nine tenths of `tracked` so that the next sweep is many sign-ins away.
    /// Windows at their limit, and windows with an attempt under way, stay.
    /// When that leaves no room, the sign-in waits for the first window at
    /// its limit to end.
    fn make_room(
        &self,
        windows: &mut HashMap<Key, Window>,
        now: Instant,
        new_keys: usize,
    ) -> Result<(), RetryAfter> {
        let (window, tracked) = (self.limits.window, self.limits.tracked);
        windows.retain(|_, w| w.in_flight > 0 || now - w.started < window);
        let keep = (tracked - tracked / 10).min(tracked.saturating_sub(new_keys));
        if windows.len() > keep {
            let droppable =
                |key: &Key, w: &Window| w.in_flight == 0 && w.failures < self.limit_of(key);
            let mut started: Vec<Instant> = windows
                .iter()
                .filter(|(key, w)| droppable(key, w))
                .map(|(_, w)| w.started)
                .collect();
            let excess = (windows.len() - keep).min(started.len());
            if excess > 0 {
                let (_, cutoff, _) = started.select_nth_unstable(excess - 1);
                let cutoff = *cutoff;
                windows.retain(|key, w| !droppable(key, w) || w.started > cutoff);
            }
        }
        if windows.len() + new_keys <= tracked {
            return Ok(());
        }
        let first_end = windows
            .values()
            .map(|w| window.saturating_sub(now - w.started))
            .min()
            .unwrap_or(window);
        Err(RetryAfter(first_end.max(Duration::from_secs(1))))
    }

    /// The account first: [`Attempt::succeeded`] clears it.
    fn keys(&self, account: &str, address: Option<IpAddr>) -> Vec<(Key, u32)> {
        let mut keys = vec![(Key::Account(account.to_owned()), self.limits.per_account)];
        if let Some(address) = address {
            keys.push((Key::Address(counted_as(address)), self.limits.per_address));
        }
        keys
    }
}

/// The address a sign-in counts against: an IPv6 address by its /64 (one
/// host often has a whole block), an IPv4-mapped one as its IPv4.
fn counted_as(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(window: Duration) -> LoginThrottle {
        LoginThrottle::new(ThrottleLimits {
            per_account: 3,
            per_address: 5,
            window,
            tracked: 100,
        })
    }

    fn fail(t: &LoginThrottle, account: &str, ip: IpAddr) {
        t.begin(account, Some(ip)).expect("allowed").failed();
    }

    #[test]
    fn an_account_is_refused_after_its_limit_until_the_window_passes() {
        let t = throttle(Duration::from_millis(200));
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..3 {
            fail(&t, "a@x", ip);
        }
        let RetryAfter(wait) = t.begin("a@x", Some(ip)).err().unwrap();
        assert!(wait > Duration::ZERO && wait <= Duration::from_millis(200));
        // Another account from the same address is still allowed.
        assert!(t.begin("b@x", Some(ip)).is_ok());
        std::thread::sleep(Duration::from_millis(250));
        assert!(t.begin("a@x", Some(ip)).is_ok());
    }

    #[test]
    fn an_address_is_refused_after_its_limit_whatever_the_account() {
        let t = throttle(Duration::from_secs(60));
        let ip: IpAddr = "10.0.0.2".parse().unwrap();
        for i in 0..5 {
            fail(&t, &format!("user{i}@x"), ip);
        }
        assert!(t.begin("fresh@x", Some(ip)).is_err());
        assert!(t
            .begin("fresh@x", Some("10.0.0.3".parse().unwrap()))
            .is_ok());
    }

    #[test]
    fn attempts_under_way_count_until_they_are_decided() {
        let t = throttle(Duration::from_secs(60));
        let ip: IpAddr = "10.0.0.5".parse().unwrap();
        let under_way: Vec<_> = (0..3).map(|_| t.begin("a@x", Some(ip)).unwrap()).collect();
        assert_eq!(
            t.begin("a@x", Some(ip)).err(),
            Some(RetryAfter(Duration::from_secs(1)))
        );
        // Dropped undecided (the request failed otherwise): nothing counted.
        drop(under_way);
        assert!(t.begin("a@x", Some(ip)).is_ok());
    }

    #[test]
    fn at_most_tracked_keys_are_kept_oldest_dropped_first() {
        let t = throttle(Duration::from_secs(60));
        for i in 0..1_000u16 {
            let [high, low] = i.to_be_bytes();
            fail(&t, &format!("user{i}@x"), IpAddr::from([10, 1, high, low]));
            assert!(t.lock().len() <= 100, "{} keys after {i}", t.lock().len());
        }
        // The newest accounts are still counted, the oldest were dropped.
        assert!(t.lock().contains_key(&Key::Account("user999@x".into())));
        assert!(!t.lock().contains_key(&Key::Account("user0@x".into())));
    }

    #[test]
    fn a_window_at_its_limit_outlives_a_flood_of_others() {
        let t = throttle(Duration::from_secs(60));
        let ip: IpAddr = "10.2.0.1".parse().unwrap();
        for _ in 0..3 {
            fail(&t, "victim@x", ip);
        }
        assert!(t.begin("victim@x", None).is_err());
        // Ten times as many other accounts and addresses as are counted.
        for i in 0..1_000u16 {
            let [high, low] = i.to_be_bytes();
            fail(&t, &format!("user{i}@x"), IpAddr::from([10, 3, high, low]));
            assert!(t.lock().len() <= 100, "{} keys after {i}", t.lock().len());
        }
        let RetryAfter(wait) = t
            .begin("victim@x", None)
            .err()
            .expect("the account's lockout outlived the flood");
        assert!(wait > Duration::from_secs(50), "{wait:?}");
        assert!(t.lock().contains_key(&Key::Account("victim@x".into())));
    }

    #[test]
    fn when_every_window_is_at_its_limit_a_new_one_waits_for_the_first_to_end() {
        let t = LoginThrottle::new(ThrottleLimits {
            per_account: 1,
            per_address: 5,
            window: Duration::from_millis(300),
            tracked: 10,
        });
        for i in 0..10 {
            t.begin(&format!("user{i}@x"), None).unwrap().failed();
        }
        let RetryAfter(wait) = t.begin("fresh@x", None).err().expect("no room");
        assert!(wait >= Duration::from_secs(1), "{wait:?}");
        // Every lockout is still counted, and a known account is answered
        // as before (refused, at its limit).
        assert_eq!(t.lock().len(), 10);
        assert!(t.begin("user0@x", None).is_err());
        std::thread::sleep(Duration::from_millis(350));
        assert!(t.begin("fresh@x", None).is_ok());
    }

    #[test]
    fn an_ipv6_address_counts_by_its_64() {
        let t = throttle(Duration::from_secs(60));
        for i in 0..5 {
            let ip: IpAddr = format!("2001:db8:1:2::{i:x}").parse().unwrap();
            fail(&t, &format!("user{i}@x"), ip);
        }
        let same_block: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        assert!(t.begin("fresh@x", Some(same_block)).is_err());
        let next_block: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert!(t.begin("fresh@x", Some(next_block)).is_ok());
        let mapped: IpAddr = "::ffff:10.0.0.9".parse().unwrap();
        assert_eq!(counted_as(mapped), "10.0.0.9".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn success_clears_the_account_but_not_the_address() {
        let t = throttle(Duration::from_secs(60));
        let ip: IpAddr = "10.0.0.4".parse().unwrap();
        fail(&t, "a@x", ip);
        fail(&t, "a@x", ip);
        t.begin("a@x", Some(ip)).unwrap().succeeded();
        fail(&t, "a@x", ip);
        fail(&t, "a@x", ip);
        assert!(t.begin("a@x", None).is_ok());
        fail(&t, "b@x", ip);
        // 5 failures from the address now.
        assert!(t.begin("c@x", Some(ip)).is_err());
    }
}
