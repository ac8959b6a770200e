import GRDB

/// Values of a database query, delivered again each time the data behind them changes.
///
/// The first element is the current value; the sequence never ends on its own. Cancel the task that
/// iterates it to stop observing.
public struct RecordObservation<Element: Sendable>: AsyncSequence, Sendable {
    let base: AsyncValueObservation<Element>

    /// Iterates the values.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncValueObservation<Element>.AsyncIterator

        /// The next value; throws when the database fails.
        public mutating func next() async throws -> Element? {
            try await base.next()
        }
    }

    /// Starts observing.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }
}
