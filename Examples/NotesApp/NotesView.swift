import FerryClient
import SwiftUI

/// The notes, newest first, kept current by a `FerryQuery` as local writes and pulled changes commit; the footer
/// shows the engine's status through a `SyncStatusModel`.
struct NotesView: View {
    let model: AppModel
    let store: LocalStore
    @State private var notes: FerryQuery<Note>
    @State private var sync: SyncStatusModel
    @State private var draft = ""
    @State private var failure: String?

    init(model: AppModel, store: LocalStore, engine: SyncEngine) {
        self.model = model
        self.store = store
        _notes = State(initialValue: FerryQuery<Note>(store: store, sortedBy: { $0.updatedAt > $1.updatedAt }))
        _sync = State(initialValue: SyncStatusModel(engine: engine))
    }

    var body: some View {
        NavigationStack {
            List {
                Section {
                    TextField("New note", text: $draft)
                        .onSubmit { add() }
                }
                Section {
                    ForEach(notes.records) { note in
                        VStack(alignment: .leading) {
                            Text(note.text)
                            Text(note.updatedAt, format: .dateTime.day().month().hour().minute())
                                .font(.caption)
                                .foregroundStyle(.secondary)
                        }
                    }
                    .onDelete { delete(at: $0) }
                } footer: {
                    status
                }
            }
            .overlay { if !notes.isLoaded { ProgressView() } }
            .refreshable { _ = try? await sync.engine.sync() }
            .navigationTitle("Notes")
            .toolbar {
                ToolbarItem(placement: .topBarLeading) {
                    if sync.isSynchronizing { ProgressView() }
                }
                ToolbarItem(placement: .topBarTrailing) {
                    Button("Sign out") { Task { await model.signOut() } }
                }
            }
            .observingWhileVisible(notes)
        }
    }

    @ViewBuilder private var status: some View {
        if let failure {
            Text(failure)
        } else if let error = notes.error {
            Text(String(describing: error))
        } else if let error = sync.lastError {
            Text(error.message)
        } else if sync.pendingCount > 0 {
            Text("\(sync.pendingCount) changes not sent yet")
        } else if let last = sync.lastSyncedAt {
            Text("Synced \(last, format: .dateTime.hour().minute())")
        } else {
            Text("Not synced yet")
        }
    }

    /// Saves a new note; the engine pushes it a moment later (or once the network is back).
    private func add() {
        let text = draft.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return }
        do {
            try store.save(Note(id: UUID(), text: text, updatedAt: .now))
            draft = ""
            failure = nil
        } catch {
            failure = "\(error)"
        }
    }

    private func delete(at offsets: IndexSet) {
        let doomed = offsets.map { notes.records[$0] }
        do {
            for note in doomed { try store.delete(note) }
        } catch {
            failure = "\(error)"
        }
    }
}
