/// The deadline of the request a store call serves, so that a store that waits on a network (the Redis store)
/// never holds a request past its own timeout, even when the request's time left is shorter than the store's
/// command timeout.
///
/// ``DiskCachePlugin`` binds it for each call it intercepts (the request's `timeoutInterval` from the moment the
/// cache sees it); a background refresh runs unbound (its store calls keep the store's own bound). A task-local of a
/// plain optional value, the shape optimised builds handle (Docs/LinuxNotes.md, "Task-locals in optimised builds").
package enum StoreDeadline {
    /// The instant by which the current request must be answered, if a cache call is running for one.
    @TaskLocal package static var current: ContinuousClock.Instant?

    /// The time left until ``current``, if one is bound (negative once it has passed).
    package static var remaining: Duration? { current.map { $0 - ContinuousClock.now } }
}
