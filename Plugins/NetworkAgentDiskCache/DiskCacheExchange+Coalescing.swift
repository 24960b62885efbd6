import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Revalidation across processes on a shared ``ResponseStore``: one process revalidates a stale entry, the others
/// serve it stale (within `stale-while-revalidate`) or wait a bounded time for the entry it stores.
extension DiskCacheExchange {
    /// Validates a stored response that needs it, letting one process do it for all when the store is shared.
    ///
    /// When the request or the response asks for validation on every use (a request's `no-cache`, `max-age` or
    /// `min-fresh`, a response's `no-cache`), this is ``validate(_:)``. Otherwise the request first claims the
    /// revalidation from the store (a local store grants every claim). The holder validates (unless the entry turned fresh
    /// since it was read: another process revalidated it just before); the others poll the store until a fresh
    /// entry is there, the claim is free again (its holder failed or is gone: they take it over), or
    /// ``ResponseStore/revalidationWaitLimit`` has passed, then validate themselves.
    func validateCoalesced(_ stored: CachedEntry) async throws -> (data: Data, response: URLResponse) {
        let shared = plugin.store
        guard mayCoalesce(stored) else { return try await validate(stored) }
        if await shared.claimRevalidation(of: stored.key) { return try await validateAsHolder(stored, on: shared) }
        // Never past the request's own deadline: a waiter whose timeout is shorter than the store's limit
        // validates itself when its time is up.
        let deadline =
            ContinuousClock.now + min(shared.revalidationWaitLimit, Duration(timeInterval: request.timeoutInterval))
        switch await pollSharedStore(
            claim: stored.key,
            until: deadline,
            answer: { await freshAnswer(replacing: stored) }
        ) {
        case .answered(let answer): return answer
        case .claimed: return try await validateAsHolder(stored, on: shared)
        case nil: break
        }
        plugin.state.record("coalescing_timeout", ["method": method])
        return try await validate(stored)
    }

    /// What polling a shared store for another process's work ended with.
    enum SharedStorePoll {
        /// Another process stored what answers this request.
        case answered((data: Data, response: URLResponse))
        /// The claim was free again without an answer (its holder failed or is gone): this request holds it now.
        case claimed
    }

    /// Polls the shared store (2 ms, doubling to 50 ms) until `answer` finds what another process stored, the
    /// claim `claim` can be taken over, or `deadline` has passed or the task was cancelled (`nil`).
    func pollSharedStore(
        claim: CacheKey,
        until deadline: ContinuousClock.Instant,
        answer: () async -> (data: Data, response: URLResponse)?
    ) async -> SharedStorePoll? {
        let clock = ContinuousClock()
        var pause = Duration.milliseconds(2)
        while clock.now < deadline {
            do {
                try await Task.sleep(for: min(pause, deadline - clock.now))
            } catch {
                return nil
            }
            if let answer = await answer() { return .answered(answer) }
            if await plugin.store.claimRevalidation(of: claim) { return .claimed }
            pause = min(pause * 2, .milliseconds(50))
        }
        return nil
    }

    /// Validates a stored response as the holder of its claim, and releases the claim.
    private func validateAsHolder(
        _ stored: CachedEntry,
        on shared: any ResponseStore
    ) async throws -> (data: Data, response: URLResponse) {
        if let answer = await freshAnswer(replacing: stored) {
            await shared.releaseRevalidation(of: stored.key)
            return answer
        }
        do {
            let result = try await validate(stored)
            await shared.releaseRevalidation(of: stored.key)
            return result
        } catch {
            await shared.releaseRevalidation(of: stored.key)
            throw error
        }
    }

    /// Claims the background refresh of a stored response across processes: the entry to validate, or `nil` when
    /// another process holds the claim or has already stored a fresh entry. A local store grants every claim.
    func claimRevalidation(of stored: CachedEntry) async -> CachedEntry? {
        let shared = plugin.store
        guard await shared.claimRevalidation(of: stored.key) else { return nil }
        if await freshEntry(replacing: stored) != nil {
            await shared.releaseRevalidation(of: stored.key)
            return nil
        }
        return stored
    }

    /// Releases a claim of ``claimRevalidation(of:)``.
    func releaseRevalidation(of stored: CachedEntry) async {
        await plugin.store.releaseRevalidation(of: stored.key)
    }

    /// Whether this request may take another process's revalidation for its own.
    private func mayCoalesce(_ stored: CachedEntry) -> Bool {
        !directives.noCache && directives.maxAge == nil && directives.minFresh == nil
            && !CacheControl(stored.header("Cache-Control")).noCache
    }

    /// The entry stored under the same key as `stored`, if it is now fresh for this request.
    private func freshEntry(replacing stored: CachedEntry) async -> CachedEntry? {
        guard let entries = try? await plugin.store.variants(forPrimaryKey: stored.key.primary),
            let current = entries.first(where: { $0.key == stored.key })
        else { return nil }
        return plugin.policy.decide(current, request: directives, now: plugin.configuration.now()) == .fresh
            ? current : nil
    }

    /// A hit built from the fresh entry another process stored, or `nil` when there is none yet.
    private func freshAnswer(replacing stored: CachedEntry) async -> (data: Data, response: URLResponse)? {
        guard let fresh = await freshEntry(replacing: stored),
            let answer = answer(with: fresh, status: .hit, now: plugin.configuration.now())
        else { return nil }
        plugin.state.record("hit", ["method": method, "coalesced": "true"])
        return answer
    }
}
