import Foundation
import NetworkAgent
import NetworkAgentTesting
import Testing

@Suite(.timeLimit(.minutes(1)))
struct ManualClockTests {
    /// Waits, without sleeping, until `count` sleeps are waiting on the clock.
    private func waitForSleepers(_ count: Int, on clock: ManualClock) async {
        while clock.sleeperCount < count { await Task.yield() }
    }

    @Test func advancingWakesExactlyTheSleepsWhoseDeadlinePassed() async throws {
        let clock = ManualClock()
        let woke = Locked<[Int]>([])
        let short = Task {
            try await clock.sleep(for: .seconds(1))
            woke.withLock { $0.append(1) }
        }
        let long = Task {
            try await clock.sleep(for: .seconds(10))
            woke.withLock { $0.append(10) }
        }
        await waitForSleepers(2, on: clock)
        clock.advance(by: .seconds(1))
        try await short.value
        #expect(woke.withLock { $0 } == [1])
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(9))
        try await long.value
        #expect(woke.withLock { $0 } == [1, 10])
        #expect(clock.now == ManualClock.Instant(offset: .seconds(10)))
        #expect(clock.sleeps.sorted() == [.seconds(1), .seconds(10)])
    }

    @Test func aSleepWhoseDeadlineHasPassedReturnsAtOnce() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(5))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(2)))
        try await clock.sleep(for: .zero)
        #expect(clock.sleeps == [.zero, .zero])
    }

    @Test func cancellingASleepEndsItWithCancellationError() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        await waitForSleepers(1, on: clock)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .zero)
    }

    @Test func aSleepStartedByACancelledTaskThrowsAtOnce() async throws {
        let clock = ManualClock()
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(60))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test func advancesOnSleepMovesTimeToEachDeadlineAndRecordsTheDelays() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        try await clock.sleep(for: .milliseconds(50))
        try await clock.sleep(for: .milliseconds(100))
        #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100)])
        #expect(clock.now.offset == .milliseconds(150))
    }

    @Test func theDateMovesWithTheClockAndTheClockNeverGoesBack() {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let clock = ManualClock(startDate: start)
        #expect(clock.date == start)
        clock.advance(by: .milliseconds(1_500))
        clock.advance(by: .seconds(-10))
        #expect(clock.date == start.addingTimeInterval(1.5))
        #expect(ManualClock().date == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test func measuresWithTheClockProtocol() async throws {
        let clock = ManualClock(advancesOnSleep: true)
        let elapsed = try await clock.measure { try await clock.sleep(for: .seconds(3)) }
        #expect(elapsed == .seconds(3))
    }
}
