/// Counts attempts per key in fixed windows and says when a key has had too many.
///
/// In memory, per instance: behind a load balancer each instance limits on its own, which bounds an
/// attacker at `limit × instances` per window — enough to make online password guessing pointless.
actor RateLimiter {
    private struct Window {
        var start: ContinuousClock.Instant
        var count: Int
    }

    private let limit: Int
    private let window: Duration
    private var windows: [String: Window] = [:]
    private var lastSweep = ContinuousClock.now

    init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// Counts an attempt for `key`; returns how long to wait when this attempt is over the limit, else `nil`.
    func attempt(_ key: String, now: ContinuousClock.Instant = .now) -> Duration? {
        record(key, now: now)
        guard let current = windows[key], current.count > limit else { return nil }
        return window - (now - current.start)
    }

    /// How long `key` must wait because its counted attempts reached the limit, without counting one.
    /// Used with ``record(_:now:)`` to count only failures.
    func wait(_ key: String, now: ContinuousClock.Instant = .now) -> Duration? {
        guard let current = windows[key], now - current.start < window, current.count >= limit else { return nil }
        return window - (now - current.start)
    }

    /// Whether `key` has any attempt counted in its current window.
    func hasAttempts(_ key: String, now: ContinuousClock.Instant = .now) -> Bool {
        guard let current = windows[key] else { return false }
        return now - current.start < window && current.count > 0
    }

    /// Counts one attempt (or one failure) for `key`.
    func record(_ key: String, now: ContinuousClock.Instant = .now) {
        sweep(now)
        var current = windows[key].flatMap { now - $0.start < window ? $0 : nil } ?? Window(start: now, count: 0)
        current.count += 1
        windows[key] = current
    }

    /// Drops expired windows now and then, so memory stays bounded by the keys seen in one window.
    private func sweep(_ now: ContinuousClock.Instant) {
        guard now - lastSweep > window else { return }
        lastSweep = now
        windows = windows.filter { now - $0.value.start < window }
    }
}
