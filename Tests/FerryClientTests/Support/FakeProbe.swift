import FerryClient
import Synchronization

/// A connectivity probe that answers what the test says and counts the checks.
final class FakeProbe: ConnectivityProbe {
    private let state: Mutex<(answer: Reachability, checks: Int)>

    init(_ answer: Reachability = .reachable) {
        state = Mutex((answer, 0))
    }

    var checks: Int { state.withLock { $0.checks } }

    func answer(_ answer: Reachability) {
        state.withLock { $0.answer = answer }
    }

    func check() async -> Reachability {
        state.withLock { state in
            state.checks += 1
            return state.answer
        }
    }
}
