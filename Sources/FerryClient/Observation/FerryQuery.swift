import FerryCore
import Foundation
import Observation
import Synchronization

/// A live query for SwiftUI: the records of one ``SyncedRecord`` type that match a filter, kept current on the main
/// actor as local writes and pulled changes commit, so a view reads ``records`` and redraws when they change.
///
/// ```swift
/// struct NotesView: View {
///     @State private var notes: FerryQuery<Note>
///
///     init(store: LocalStore, sermon: Sermon) {
///         _notes = State(initialValue: FerryQuery(store: store, where: ["sermon_id": .string(sermon.id.uuidString)]) {
///             ($0.timestamp ?? 0) < ($1.timestamp ?? 0)
///         })
///     }
///
///     var body: some View {
///         List(notes.records) { Text($0.text) }
///     }
/// }
/// ```
///
/// The query observes from its creation (a view holds it in `@State` and has nothing to start) until ``stop()`` or
/// until it is released. It iterates ``LocalStore/observeAll(_:where:)`` and assigns every value that observation
/// delivers, on the main actor and in the order delivered: the last value assigned is always the store's latest. The
/// store may merge commits that land close together into one value.
@Observable
@MainActor
public final class FerryQuery<Record: SyncedRecord> {
    /// The live records matching ``filter``, ordered by ``sort`` (id order without one). Empty until the first read;
    /// they keep their last value while a new filter or sort loads, after ``stop()`` and after a failure, so a list
    /// does not flash empty.
    public private(set) var records: [Record] = []
    /// Why the query could not be read (a filter naming an unknown field, a database failure); `nil` while it reads
    /// fine. The next value read clears it.
    public private(set) var error: (any Error)? = nil
    /// Whether ``records`` were read with the current ``filter`` and ``sort``: `false` from creation, and again from a
    /// change of either, until the first value arrives. A view shows a placeholder until then, rather than "no notes".
    public private(set) var isLoaded = false

    /// The store the query reads.
    public let store: LocalStore

    /// The field values records must have (see ``LocalStore/fetchAll(_:where:)``). Setting a different filter
    /// restarts the observation: a search field or a picker can bind to it.
    public var filter: [String: JSONValue] {
        get {
            access(keyPath: \.filter)
            return filterValue
        }
        set {
            guard newValue != filterValue else { return }
            withMutation(keyPath: \.filter) { filterValue = newValue }
            restartIfWanted()
        }
    }

    /// Whether the first record goes before the second; `nil` keeps the store's id order. Runs on the main actor for
    /// every value read, so keep it cheap. Setting it restarts the observation.
    public var sort: ((Record, Record) -> Bool)? {
        get {
            access(keyPath: \.sort)
            return sortValue
        }
        set {
            withMutation(keyPath: \.sort) { sortValue = newValue }
            restartIfWanted()
        }
    }

    @ObservationIgnored private var filterValue: [String: JSONValue]
    @ObservationIgnored private var sortValue: ((Record, Record) -> Bool)?
    /// Whether the owner wants the query to observe: set by ``start()`` and creation, cleared by ``stop()``.
    @ObservationIgnored private var isWanted = false
    /// Whether an observation task runs now (it ends on a failure without being stopped).
    @ObservationIgnored private var isRunning = false
    /// Not on the main actor, so that `deinit` can cancel the task.
    private nonisolated let observing = ObservationTask()

    /// Creates the query and starts observing.
    ///
    /// - Parameters:
    ///   - store: the store to read.
    ///   - filter: the field values records must have; empty for every live record of the type.
    ///   - areInIncreasingOrder: the order of ``records``; `nil` for the store's id order.
    public init(store: LocalStore, where filter: [String: JSONValue] = [:], sortedBy areInIncreasingOrder: ((Record, Record) -> Bool)? = nil) {
        self.store = store
        filterValue = filter
        sortValue = areInIncreasingOrder
        start()
    }

    /// Creates the query ordered by a Foundation `SortComparator` (a `KeyPathComparator`, as a SwiftUI `Table`'s
    /// sort order holds), and starts observing.
    public convenience init<Comparator: SortComparator>(
        store: LocalStore, where filter: [String: JSONValue] = [:], sortedBy comparator: Comparator
    ) where Comparator.Compared == Record {
        self.init(store: store, where: filter, sortedBy: { comparator.compare($0, $1) == .orderedAscending })
    }

    deinit {
        observing.cancel()
    }

    /// Starts observing again after ``stop()`` or a failure; does nothing while the query observes.
    public func start() {
        isWanted = true
        if !isRunning { begin() }
    }

    /// Stops observing: ``records`` keep their last value and changes to the store no longer reach them. Releasing
    /// the query stops it too.
    public func stop() {
        isWanted = false
        isRunning = false
        observing.cancel()
    }

    private func restartIfWanted() {
        if isWanted { begin() }
    }

    /// Replaces any running observation with one of the current filter.
    ///
    /// A value the replaced task has read but not yet assigned is dropped: the task checks for cancellation on the
    /// main actor, where the replacement happened, before it assigns.
    private func begin() {
        observing.cancel()
        isLoaded = false
        let observation: RecordObservation<[Record]>
        do {
            observation = try store.observeAll(Record.self, where: filterValue)
        } catch {
            isRunning = false
            self.error = error
            return
        }
        isRunning = true
        observing.replace(with: Task { @MainActor [weak self] in
            do {
                for try await values in observation {
                    guard !Task.isCancelled, let self else { return }
                    self.receive(values)
                }
                guard !Task.isCancelled, let self else { return }
                self.isRunning = false
            } catch {
                guard !Task.isCancelled, let self else { return }
                self.isRunning = false
                self.error = error
            }
        })
    }

    private func receive(_ values: [Record]) {
        if let sortValue {
            records = values.sorted(by: sortValue)
        } else {
            records = values
        }
        if error != nil { error = nil }
        if !isLoaded { isLoaded = true }
    }
}

/// The task behind an observation model, held where the model's `deinit` (which is not on the main actor) can cancel it.
final class ObservationTask: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Keeps `next`, cancelling the task kept before.
    func replace(with next: Task<Void, Never>?) {
        let previous = task.withLock { current in
            defer { current = next }
            return current
        }
        previous?.cancel()
    }

    /// Cancels the task kept, if any.
    func cancel() {
        replace(with: nil)
    }
}
