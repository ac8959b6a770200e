#if canImport(SwiftUI)
import SwiftUI

// SwiftUI needs no wrapper to use ``FerryQuery`` or ``SyncStatusModel``: both are `@Observable`, so a view that holds
// one in `@State` redraws when what its body read changes, and releasing the view's state stops the observation.
// The one thing a view cannot say with `@State` alone is "only while I am on screen", which this file adds.

@MainActor
extension View {
    /// Keeps `query` observing only while this view is on screen: it stops when the view disappears (a pushed
    /// screen covers it, another tab is chosen) and starts again, reading the store afresh, when it reappears.
    ///
    /// A query that is not on screen otherwise reads the store again after every commit that touches its
    /// collection. Its ``FerryQuery/records`` keep their last value while it is stopped.
    ///
    /// ```swift
    /// List(notes.records) { Text($0.text) }
    ///     .observingWhileVisible(notes)
    /// ```
    public func observingWhileVisible<Record: SyncedRecord>(_ query: FerryQuery<Record>) -> some View {
        onAppear { query.start() }
            .onDisappear { query.stop() }
    }
}
#endif
