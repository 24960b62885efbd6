import Foundation
import NetworkAgent

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collapsed forwarding: concurrent misses of one primary key (method, URL, credentials) make one origin request,
/// within a process and, on a ``ResponseStore`` that coalesces (a non-zero
/// ``ResponseStore/revalidationWaitLimit``, such as the Redis store's), across processes.
///
/// The first request that misses fetches (the leader); the others wait for it, at most
/// ``DiskCachePlugin/Configuration/missWaitLimit`` in all, then look the resource up again with their own request:
/// a stored response that is fresh for them answers them (``CacheStatus/hit``, event `hit` with `coalesced=true`).
/// They fetch for themselves (event `miss` with `coalesced=<why>`) when the leader's response was not stored under
/// their key (`no-store`, a status or size the cache does not keep, a `Vary` they do not match, a redirect),
/// when it failed, or when the bound passed. A cancelled leader hands over to one of its waiters; a waiter that
/// joins again only after that one's fetch ended looks in the store before it fetches.
extension DiskCacheExchange {
    /// Fetches a response nothing stored answers, collapsing concurrent misses of its primary key into one fetch.
    ///
    /// - Parameters:
    ///   - key: The request's key without varying headers.
    ///   - reason: Why the lookup missed, for the `miss` event.
    func fetchCollapsed(_ key: CacheKey, reason: String) async throws -> (data: Data, response: URLResponse) {
        let limit = plugin.configuration.missWaitLimit
        guard limit > .zero, !isBackground, mayWaitForOthers || mayFetchForOthers else {
            return try await fetchMiss(reason: reason)
        }
        let primary = key.primary
        let clock = ContinuousClock()
        let deadline = clock.now + limit
        // Whether a flight this request waited for was abandoned: then another waiter may have fetched and stored
        // the response, and ended its own flight, before this one got to join again.
        var handedOver = false
        while true {
            switch plugin.state.joinMiss(primary, mayLead: mayFetchForOthers) {
            case .alone:
                return try await fetchMiss(reason: reason)
            case .leader(let lead):
                // A waiter woken late by an abandoned flight finds no flight left when the waiter that took over
                // has already stored the response: it looks in the store before fetching again.
                if handedOver, let answer = await collapsedAnswer(key).answer {
                    plugin.state.finishMiss(primary, lead: lead, outcome: .answered)
                    return answer
                }
                return try await fetchLeading(lead, key: key, reason: reason, until: deadline)
            case .waiter(let flight):
                guard mayWaitForOthers else { return try await fetchMiss(reason: reason) }
                switch await flight.outcome(waitingAtMost: max(.zero, deadline - clock.now)) {
                case .answered:
                    let (answer, missed) = await collapsedAnswer(key)
                    if let answer { return answer }
                    // Nothing was stored (no-store, an error status, a redirect): the next misses need not wait for
                    // each other. (A variant for other header values, or a response too old for this request's
                    // directives, says nothing about the others.)
                    if missed == "not_stored" { plugin.state.markUncollapsed(primary) }
                    return try await fetchMiss(reason: reason, coalesced: "not_usable")
                case .abandoned:
                    // The leader's caller went away: the next request to join fetches for the rest.
                    handedOver = true
                    continue
                case .failed:
                    return try await fetchMiss(reason: reason, coalesced: "leader_failed")
                case .timedOut:
                    plugin.state.record("coalescing_timeout", ["method": method, "kind": "miss"])
                    return try await fetchMiss(reason: reason, coalesced: "timeout")
                case .cancelled:
                    return try await fetchMiss(reason: reason, coalesced: "cancelled")
                }
            }
        }
    }

    /// Whether this request may be answered by a response fetched for another: not when it asks for a response
    /// from the origin (`no-cache`) or for nothing of it to be kept (`no-store`).
    private var mayWaitForOthers: Bool { !directives.noCache && !directives.noStore }

    /// Whether this request's response can be stored for the others: not when it is streamed (its body goes to its
    /// caller, not to the store) or asks for nothing to be kept (`no-store`).
    private var mayFetchForOthers: Bool { !next.isStreaming && !directives.noStore }

    /// Fetches for the requests waiting for the fetch `lead`, and tells them how it ended.
    private func fetchLeading(
        _ lead: DiskCacheState.MissLead,
        key: CacheKey,
        reason: String,
        until deadline: ContinuousClock.Instant
    ) async throws -> (data: Data, response: URLResponse) {
        do {
            let result = try await fetchAcrossProcesses(key, reason: reason, until: deadline)
            plugin.state.finishMiss(key.primary, lead: lead, outcome: .answered)
            return result
        } catch {
            let cancelled =
                Task.isCancelled || error is CancellationError
                || (error as? NetworkAgentError)?.code == .cancelled
            plugin.state.finishMiss(key.primary, lead: lead, outcome: cancelled ? .abandoned : .failed)
            throw error
        }
    }

    /// Fetches a miss as the one process that does, when the store is shared and coalesces: claims the fetch from
    /// the store (``ResponseStore/claimRevalidation(of:)``, under the key ``CacheKey/missClaim``), or polls
    /// the store until another process's response is there, the claim is free (its holder is done or gone: this
    /// request takes it over) or the deadline has passed. A request that may not wait for others (`no-cache`)
    /// fetches at once when another process holds the claim.
    private func fetchAcrossProcesses(
        _ key: CacheKey,
        reason: String,
        until deadline: ContinuousClock.Instant
    ) async throws -> (data: Data, response: URLResponse) {
        // A store that never makes a request wait (a local one grants every claim) has no other process to
        // coalesce with: skip the claim and the extra read it would cost.
        let shared = plugin.store
        guard shared.revalidationWaitLimit > .zero else { return try await fetchMiss(reason: reason) }
        let claim = key.missClaim
        if await shared.claimRevalidation(of: claim) {
            return try await fetchHolding(key, claim: claim, on: shared, reason: reason)
        }
        guard mayWaitForOthers else { return try await fetchMiss(reason: reason) }
        switch await pollSharedStore(claim: claim, until: deadline, answer: { await collapsedAnswer(key).answer }) {
        case .answered(let answer): return answer
        case .claimed: return try await fetchHolding(key, claim: claim, on: shared, reason: reason)
        case nil: break
        }
        if !Task.isCancelled { plugin.state.record("coalescing_timeout", ["method": method, "kind": "miss"]) }
        return try await fetchMiss(reason: reason, coalesced: "timeout")
    }

    /// Fetches a miss while holding its claim on the shared store, unless another process stored the response
    /// just before, and releases the claim.
    private func fetchHolding(
        _ key: CacheKey,
        claim: CacheKey,
        on shared: any ResponseStore,
        reason: String
    ) async throws -> (data: Data, response: URLResponse) {
        if let answer = await collapsedAnswer(key).answer {
            await shared.releaseRevalidation(of: claim)
            return answer
        }
        do {
            let result = try await fetchMiss(reason: reason)
            await shared.releaseRevalidation(of: claim)
            return result
        } catch {
            await shared.releaseRevalidation(of: claim)
            throw error
        }
    }

    /// Records a miss and fetches.
    ///
    /// - Parameters:
    ///   - reason: Why the lookup missed.
    ///   - coalesced: Why a request that waited for another fetches after all, if it did.
    private func fetchMiss(
        reason: String,
        coalesced: String? = nil
    ) async throws -> (data: Data, response: URLResponse) {
        // Built only when an observer gets the event (`record` takes it as an autoclosure).
        plugin.state.record("miss", Self.missAttributes(method: method, reason: reason, coalesced: coalesced))
        return try await fetch(fallback: nil)
    }

    /// The `miss` event's attributes: `method`, `reason` and, when the miss was coalesced, `coalesced`.
    private static func missAttributes(method: String, reason: String, coalesced: String?) -> [String: String] {
        var attributes = ["method": method, "reason": reason]
        attributes["coalesced"] = coalesced
        return attributes
    }

    /// A hit built from what another request just stored, if it answers this one: looked up with this request
    /// (its credentials, its values of the headers the response varies on) and fresh for its directives; otherwise
    /// why not: the lookup's reason (`not_stored`, `vary_mismatch`, `error`) or `not_fresh`.
    private func collapsedAnswer(
        _ key: CacheKey
    ) async -> (answer: (data: Data, response: URLResponse)?, missed: String) {
        let (stored, reason) = await plugin.lookup(key, request: request)
        guard let stored else { return (nil, reason) }
        let now = plugin.configuration.now()
        let facts = plugin.policy.facts(of: stored)
        guard plugin.policy.decide(stored, request: directives, now: now, facts: facts) == .fresh,
            let answer = answer(with: stored, status: .hit, now: now, facts: facts)
        else { return (nil, "not_fresh") }
        plugin.state.record("hit", ["method": method, "coalesced": "true"])
        return (answer, "")
    }
}

extension DiskCachePlugin {
    /// The number of requests in this process waiting for another request's fetch of a miss now, for tests that
    /// act once the waiters are there.
    package var missWaiterCount: Int { state.missWaiterCount }
}

extension CacheKey {
    /// The key under which one process claims the fetch of a missing response of this key's resource for every
    /// process on a shared store: the primary key with a variant no stored entry has, so that the claim is not
    /// an entry's revalidation claim.
    package var missClaim: CacheKey {
        CacheKey(method: method, url: url, credential: credential, varyNames: [], variant: "miss")
    }
}
