import NIOConcurrencyHelpers

/// Ends an opening of a source that finds its speed when its reading finds the line's
/// bytes make no frames, so that the source opens again and finds the speed anew: a
/// receiver back from a power cycle at its saved or default speed, not the one it was
/// switched to (gpsd hunts for the speed again likewise).
final class SpeedSearch: Sendable {
    private struct State {
        var opening: Task<Void, any Error>?
        var requested = false
    }

    private let state = NIOLockedValueBox(State())

    /// Runs `opening` (the reading of one opening) until it ends: returns or throws as it
    /// does, or throws `lost()` when ``request()`` ended it. Cancelling the calling task
    /// ends it too.
    func run(
        _ opening: @escaping @Sendable () async throws -> Void, lost: () -> DeviceError
    ) async throws {
        let task = Task { try await opening() }
        let requestedAlready = state.withLockedValue { state in
            state.opening = task
            return state.requested
        }
        if requestedAlready { task.cancel() }
        let ended = await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
        let requested = state.withLockedValue { state in
            defer { state = State() }
            return state.requested
        }
        switch ended {
        case .success where requested: throw lost()
        case .failure(let error) where requested && error is CancellationError: throw lost()
        // A device that failed as it was stopped failed: its error says why.
        default: try ended.get()
        }
    }

    /// Ends the opening: its reading stops, and ``run(_:lost:)`` throws.
    func request() {
        let opening = state.withLockedValue { state in
            state.requested = true
            return state.opening
        }
        opening?.cancel()
    }
}
