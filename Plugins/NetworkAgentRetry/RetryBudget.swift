import NetworkAgent

extension RetryPlugin {
    /// A retry budget in the shape of gRPC's retry throttling (gRFC A6, "Retry throttling"): a token bucket shared
    /// by every call through one ``RetryPlugin`` value and its copies.
    ///
    /// The bucket starts full, at ``maximumTokens``. Every attempt that fails in a way the policy retries takes one
    /// token away (not below zero); every attempt that gets an answer the policy does not retry (a 2xx, a 404…)
    /// puts ``tokenRatio`` back (not above ``maximumTokens``). A retry is made only while the bucket holds **more
    /// than half** of ``maximumTokens``; otherwise the call stops with its last real answer or error, and a
    /// `retry.retry_throttled` event says so.
    ///
    /// So when an origin fails everything, a fleet of callers stops retrying after `maximumTokens / 2` failed
    /// attempts per plugin, and the origin sees about one request per call instead of one per attempt; when it
    /// heals, every `1 / tokenRatio` successes earn one retry back.
    ///
    /// ```swift
    /// let strict = RetryPlugin.Policy(budget: RetryPlugin.RetryBudget(maximumTokens: 10, tokenRatio: 0.1))
    /// let unbounded = RetryPlugin.Policy(budget: nil)
    /// ```
    public struct RetryBudget: Sendable, Hashable {
        /// The size of the bucket, and its content at the start; clamped to `1...1000` as gRPC does.
        public var maximumTokens: Double
        /// What an attempt that is not retried puts back; clamped to `0.001...1` (gRPC keeps three decimals).
        public var tokenRatio: Double

        /// Creates a budget.
        ///
        /// - Parameters:
        ///   - maximumTokens: The bucket's size; defaults to ``RetryPlugin/defaultBudgetMaximumTokens``.
        ///   - tokenRatio: What a success puts back; defaults to ``RetryPlugin/defaultBudgetTokenRatio``.
        public init(
            maximumTokens: Double = RetryPlugin.defaultBudgetMaximumTokens,
            tokenRatio: Double = RetryPlugin.defaultBudgetTokenRatio
        ) {
            self.maximumTokens = maximumTokens
            self.tokenRatio = tokenRatio
        }

        /// The default budget: 100 tokens, 0.1 back per success.
        public static let `default` = RetryBudget()

        /// ``maximumTokens`` in range.
        var clampedMaximum: Double {
            maximumTokens.isNaN ? RetryPlugin.defaultBudgetMaximumTokens : min(1000, max(1, maximumTokens))
        }

        /// ``tokenRatio`` in range.
        var clampedRatio: Double {
            tokenRatio.isNaN ? RetryPlugin.defaultBudgetTokenRatio : min(1, max(0.001, tokenRatio))
        }
    }

    /// The default size of the retry budget's bucket: 100 tokens, so that throttling starts after 50 failed attempts
    /// more than the successes have paid for. gRPC has no default (its gRFC's example is 10); 100 keeps a lone call
    /// with a long policy (ten attempts) and a burst of failures across a few calls unthrottled, and still bounds a
    /// dead origin's extra load to 50 requests per plugin.
    public static let defaultBudgetMaximumTokens = 100.0

    /// The default share of a token an attempt that is not retried puts back: 0.1, gRFC A6's example value. Retries
    /// then stay unthrottled while fewer than about one attempt in eleven fails.
    public static let defaultBudgetTokenRatio = 0.1

    /// The shared content of one plugin's budget.
    final class TokenBucket: Sendable {
        let budget: RetryBudget
        private let maximum: Double
        private let ratio: Double
        private let tokens: Locked<Double>

        init(_ budget: RetryBudget) {
            self.budget = budget
            maximum = budget.clampedMaximum
            ratio = budget.clampedRatio
            tokens = Locked(budget.clampedMaximum)
        }

        /// The tokens now.
        var content: Double { tokens.withLock { $0 } }

        /// Takes a token for a retryable failure.
        ///
        /// - Returns: Whether a retry is allowed after it: more than half the bucket left.
        func takeForFailure() -> Bool {
            let maximum = maximum
            return tokens.withLock { tokens in
                tokens = max(0, tokens - 1)
                return tokens > maximum / 2
            }
        }

        /// Puts ``RetryBudget/tokenRatio`` back for an answer that is not retried.
        func refundForSuccess() {
            let maximum = maximum
            let ratio = ratio
            tokens.withLock { tokens in
                if tokens < maximum { tokens = min(maximum, tokens + ratio) }
            }
        }
    }
}
