@testable import GPSFixTime
import Testing

/// Which wakes of the carrier-detect wait are a pulse's rising edge, from the line as it
/// was when the wait began and as it is after the wake. The kernel's counts are those a
/// UART's or a USB adapter's driver keeps (TIOCGICOUNT); a pseudo-terminal keeps none.
@Suite("Carrier-detect edges")
struct CarrierLineTests {
    private func line(_ level: Bool, _ changes: UInt32?) -> CarrierLine { CarrierLine(level: level, changes: changes) }

    @Test("a pulse wider than the wake: its rising edge is a pulse, its falling edge is not")
    func widePulse() {
        #expect(CarrierLine.wakeMarksPulse(before: line(false, 40), after: line(true, 41)))
        #expect(!CarrierLine.wakeMarksPulse(before: line(true, 41), after: line(false, 42)))
    }

    @Test("a pulse over before the line is read after the wake (a timing receiver's 10 µs) is a pulse")
    func pulseOverBeforeTheRead() {
        // A UART latches the change and counts it once, or counts both edges: either way
        // the line reads low again, and only the count tells that it rose.
        #expect(CarrierLine.wakeMarksPulse(before: line(false, 40), after: line(false, 41)))
        #expect(CarrierLine.wakeMarksPulse(before: line(false, 40), after: line(false, 42)))
        // The counter wraps.
        #expect(CarrierLine.wakeMarksPulse(before: line(false, .max), after: line(false, 0)))
    }

    @Test("a wake with no change counted (a hang-up, another line) is no pulse, unless the line was found risen")
    func wakeWithoutChange() {
        #expect(!CarrierLine.wakeMarksPulse(before: line(false, 40), after: line(false, 40)))
        #expect(!CarrierLine.wakeMarksPulse(before: line(true, 40), after: line(true, 40)))
        // A driver whose count lags its level: the rise is seen, so it is one.
        #expect(CarrierLine.wakeMarksPulse(before: line(false, 40), after: line(true, 40)))
    }

    @Test("a wait begun with the line up ends at a falling edge: no pulse, even when it rose again")
    func waitBegunHigh() {
        // The wake is stamped at the first change, the fall: the rise after it is not
        // what the stamp measured, so it is left rather than sent a pulse-width late.
        #expect(!CarrierLine.wakeMarksPulse(before: line(true, 40), after: line(true, 42)))
        #expect(!CarrierLine.wakeMarksPulse(before: line(true, 40), after: line(false, 43)))
    }

    @Test("a driver that keeps no counts: the level alone, a wake that finds the line risen")
    func withoutCounts() {
        #expect(CarrierLine.wakeMarksPulse(before: line(false, nil), after: line(true, nil)))
        #expect(!CarrierLine.wakeMarksPulse(before: line(false, nil), after: line(false, nil)))
        #expect(!CarrierLine.wakeMarksPulse(before: line(true, nil), after: line(true, nil)))
        #expect(!CarrierLine.wakeMarksPulse(before: line(true, nil), after: line(false, nil)))
    }
}
