import Foundation

extension Duration {
    /// The duration in seconds, fractions included.
    package var timeInterval: TimeInterval {
        TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
    }
}
